"""read_file: numbering, windows, encodings, binary, huge files, boundary."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from mycode_builtin_tools import readstate


def test_numbered_lines_and_resources(workspace: Path, run, context) -> None:
    (workspace / "a.py").write_text("one\ntwo\nthree\n")
    result = run("read_file", path="a.py")
    assert not result.is_error
    assert result.content == "     1\tone\n     2\ttwo\n     3\tthree"
    assert result.metadata["resources"] == ["file:a.py:1-3"]
    assert readstate.get(context, workspace / "a.py") is not None


def test_window_says_partial_and_how_to_read_on(workspace: Path, run) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = run("read_file", path="big.txt", offset=10, limit=5)
    text = result.text()
    assert text.startswith("    10\tline 10\n")
    assert "    14\tline 14" in text and "line 15" not in text
    assert "showing lines 10-14 of 100" in text
    assert "offset=15" in text
    assert result.metadata["resources"] == ["file:big.txt:10-14"]


def test_offset_past_end_is_an_error(workspace: Path, run) -> None:
    (workspace / "a.txt").write_text("x\n")
    result = run("read_file", path="a.txt", offset=5)
    assert result.is_error and "past the end" in result.text()


def test_long_lines_are_cut_with_marker(workspace: Path, run) -> None:
    (workspace / "long.txt").write_text("x" * 5000 + "\nshort\n")
    text = run("read_file", path="long.txt").text()
    first = text.splitlines()[0]
    assert "line cut: 3000 more characters" in first
    assert len(first) < 2100


def test_crlf_lines_shown_without_carriage_returns(workspace: Path, run) -> None:
    (workspace / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert run("read_file", path="w.txt").text() == "     1\ta\n     2\tb"


def test_utf8_bom_and_utf16(workspace: Path, run) -> None:
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    text = run("read_file", path="bom.txt").text()
    assert "     1\thello" in text and "\ufeff" not in text
    (workspace / "u16.txt").write_bytes("héllo\nwörld\n".encode("utf-16"))
    text = run("read_file", path="u16.txt").text()
    assert "     2\twörld" in text and "utf-16" in text


def test_latin1_and_cp1251_fallbacks(workspace: Path, run) -> None:
    (workspace / "l1.txt").write_bytes("café crème\n".encode("latin-1"))
    text = run("read_file", path="l1.txt").text()
    assert "café crème" in text and "latin-1" in text
    (workspace / "ru.txt").write_bytes("Привет, мир!\n".encode("cp1251"))
    text = run("read_file", path="ru.txt").text()
    assert "Привет, мир!" in text and "cp1251" in text


def test_binary_is_refused(workspace: Path, run) -> None:
    (workspace / "doc.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)))
    result = run("read_file", path="doc.pdf")
    assert result.is_error and "binary" in result.text() and "PDF" in result.text()
    (workspace / "blob.bin").write_bytes(b"abc\x00def")
    assert run("read_file", path="blob.bin").is_error


@pytest.mark.parametrize(
    ("name", "head", "mime"),
    [
        ("shot.png", b"\x89PNG\r\n\x1a\n", "image/png"),
        ("photo.jpg", b"\xff\xd8\xff\xe0", "image/jpeg"),
        ("anim.gif", b"GIF89a", "image/gif"),
        ("pic.webp", b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
def test_an_image_is_shown_as_an_image(
    workspace: Path, run, name: str, head: bytes, mime: str
) -> None:
    data = head + bytes(range(256)) * 4
    (workspace / name).write_bytes(data)
    result = run("read_file", path=name)
    assert not result.is_error
    note, image = result.content
    assert note["type"] == "text" and name in note["text"] and mime in note["text"]
    assert image == {"type": "image", "mime_type": mime, "data": base64.b64encode(data).decode()}
    assert result.metadata["resources"] == [f"file:{name}"]


def test_an_image_over_the_limit_is_refused(workspace: Path, run) -> None:
    with (workspace / "huge.png").open("wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n")
        fh.truncate(25 * 1024 * 1024)  # sparse
    result = run("read_file", path="huge.png")
    assert result.is_error and "25 MB" in result.text() and "20 MB" in result.text()


def test_directory_and_missing(workspace: Path, run) -> None:
    (workspace / "pkg").mkdir()
    result = run("read_file", path="pkg")
    assert result.is_error and "directory" in result.text() and "glob" in result.text()
    missing = run("read_file", path="nope.txt")
    assert missing.is_error and "does not exist" in missing.text()


def test_empty_file(workspace: Path, run) -> None:
    (workspace / "e.txt").write_bytes(b"")
    result = run("read_file", path="e.txt")
    assert not result.is_error and "empty" in result.text()


def test_outside_paths_refused(workspace: Path, run, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    for path in ["../secret.txt", str(secret), "~/x", "a\x00b", "x" * 5000]:
        result = run("read_file", path=path)
        assert result.is_error, path
        assert "top secret" not in result.text()
    (workspace / "link").symlink_to(secret)
    result = run("read_file", path="link")
    assert result.is_error and "symlink" in result.text()


def test_huge_file_window_streams(workspace: Path, run) -> None:
    big = workspace / "huge.log"
    line = b"0123456789" * 9 + b"\n"
    with big.open("wb") as fh:
        block = line * 10_000
        for _ in range(12):  # ~12 MB, above the whole-file threshold
            fh.write(block)
    assert big.stat().st_size > 8 * 1024 * 1024
    result = run("read_file", path="huge.log", offset=50_000, limit=100)
    text = result.text()
    assert not result.is_error
    assert text.startswith(" 50000\t0123456789")
    assert "50099\t" in text and "50100\t" not in text
    assert "offset=50100" in text


def test_reads_artifacts_but_nothing_else_in_home(run, context, home: Path) -> None:
    artifact = context.artifacts_dir / "out.log"
    artifact.write_text("saved output\n")
    result = run("read_file", path=str(artifact))
    assert not result.is_error and "saved output" in result.text()
    (home / "config.toml").write_text("x = 1\n")
    assert run("read_file", path=str(home / "config.toml")).is_error


def test_read_records_mtime_and_size(workspace: Path, run, context) -> None:
    path = workspace / "s.txt"
    path.write_text("abc\n")
    run("read_file", path="s.txt")
    record = readstate.get(context, path)
    assert record is not None
    stat = os.stat(path)
    assert (record.mtime_ns, record.size) == (stat.st_mtime_ns, stat.st_size)
    assert record.ranges == [(1, 1)]


def test_line_numbers_count_newlines_only(workspace: Path, run) -> None:
    (workspace / "ff.txt").write_text("a\x0cb\nc\u2028d\ne\n")
    assert run("read_file", path="ff.txt").text() == "     1\ta\x0cb\n     2\tc\u2028d\n     3\te"


def test_another_sessions_artifacts_are_refused(run, context, home: Path) -> None:
    """Only this session's artifacts folder is readable; another session's and a search over
    MYCODE_HOME are refused like any outside path."""
    mine = context.artifacts_dir / "mine.log"
    mine.write_text("my output\n")
    other_dir = home / "artifacts" / "other-session"
    other_dir.mkdir(parents=True)
    (other_dir / "secret.log").write_text("other output\n")
    assert "my output" in run("read_file", path=str(mine)).text()
    refused = run("read_file", path=str(other_dir / "secret.log"))
    assert refused.is_error and "outside the workspace" in refused.text()
    # a ../ from this session's folder does not reach the sibling either
    sneaky = run("read_file", path=str(context.artifacts_dir / ".." / "other-session/secret.log"))
    assert sneaky.is_error
    for tool in ("grep", "glob"):
        for where in (home, home / "artifacts"):
            args = {"pattern": "output"} if tool == "grep" else {"pattern": "**/*.log"}
            result = run(tool, path=str(where), **args)
            assert result.is_error and "other output" not in result.text(), (tool, where)
            assert "secret.log" not in result.text()
    found = run("grep", pattern="output", path=str(context.artifacts_dir))
    assert "mine.log" in found.text() and "secret.log" not in found.text()
