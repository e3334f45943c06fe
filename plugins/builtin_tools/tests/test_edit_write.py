"""edit_file and write_file: exact edits that keep bytes, stale guard, atomic writes."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest


def _read_then_edit(run, name: str, old: str, new: str, replace_all: bool = False):
    assert not run("read_file", path=name).is_error
    return run("edit_file", path=name, old_string=old, new_string=new, replace_all=replace_all)


def test_unique_replace_returns_diff_and_metadata(workspace: Path, run) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    result = _read_then_edit(run, "a.py", "y = 2", "y = 3")
    assert not result.is_error
    assert (workspace / "a.py").read_text() == "x = 1\ny = 3\n"
    assert "-y = 2" in result.text() and "+y = 3" in result.text()
    assert result.metadata["mutated"] == ["a.py"]
    assert result.metadata["resources"] == ["file:a.py"]


def test_requires_prior_read(workspace: Path, run) -> None:
    (workspace / "a.txt").write_text("hello\n")
    result = run("edit_file", path="a.txt", old_string="hello", new_string="bye")
    assert result.is_error and "read_file" in result.text()
    assert (workspace / "a.txt").read_text() == "hello\n"


def test_stale_file_is_refused(workspace: Path, run) -> None:
    path = workspace / "a.txt"
    path.write_text("hello\n")
    run("read_file", path="a.txt")
    time.sleep(0.01)
    path.write_text("hello world, changed by someone else\n")
    result = run("edit_file", path="a.txt", old_string="hello", new_string="bye")
    assert result.is_error and "changed on disk" in result.text()
    assert path.read_text() == "hello world, changed by someone else\n"


def test_consecutive_edits_without_rereading(workspace: Path, run) -> None:
    (workspace / "a.txt").write_text("a b c\n")
    assert not _read_then_edit(run, "a.txt", "a", "A").is_error
    assert not run("edit_file", path="a.txt", old_string="b", new_string="B").is_error
    assert (workspace / "a.txt").read_text() == "A B c\n"


def test_multiple_matches_reports_count_and_lines(workspace: Path, run) -> None:
    (workspace / "m.txt").write_text("foo\nbar\nfoo\nfoo\n")
    result = _read_then_edit(run, "m.txt", "foo", "baz")
    assert result.is_error
    assert "3 times" in result.text() and "lines 1, 3, 4" in result.text()
    assert (workspace / "m.txt").read_text() == "foo\nbar\nfoo\nfoo\n"


def test_replace_all(workspace: Path, run) -> None:
    (workspace / "m.txt").write_text("foo\nbar\nfoo\n")
    result = _read_then_edit(run, "m.txt", "foo", "baz", replace_all=True)
    assert not result.is_error and "2 replacements" in result.text()
    assert (workspace / "m.txt").read_text() == "baz\nbar\nbaz\n"


def test_not_found_shows_closest_region(workspace: Path, run) -> None:
    (workspace / "c.py").write_text("def alpha():\n    return 1\n\ndef beta():\n    return 2\n")
    result = _read_then_edit(run, "c.py", "def betta():\n    return 2", "x")
    assert result.is_error and "not found" in result.text()
    assert "def beta():" in result.text()


def test_identical_and_empty_old_string(workspace: Path, run) -> None:
    (workspace / "a.txt").write_text("abc\n")
    assert _read_then_edit(run, "a.txt", "abc", "abc").is_error
    assert run("edit_file", path="a.txt", old_string="", new_string="x").is_error
    assert (workspace / "a.txt").read_text() == "abc\n"


def test_crlf_kept_when_model_sends_lf(workspace: Path, run) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = _read_then_edit(run, "w.txt", "one\ntwo", "one\n2\nextra")
    assert not result.is_error
    assert path.read_bytes() == b"one\r\n2\r\nextra\r\nthree\r\n"


def test_bom_and_missing_trailing_newline_kept(workspace: Path, run) -> None:
    path = workspace / "b.cs"
    path.write_bytes(b"\xef\xbb\xbfusing System;\nclass A {}")
    assert not _read_then_edit(run, "b.cs", "A", "B").is_error
    assert path.read_bytes() == b"\xef\xbb\xbfusing System;\nclass B {}"


def test_latin1_file_keeps_encoding(workspace: Path, run) -> None:
    path = workspace / "l.txt"
    path.write_bytes("prix: 5 £ café\n".encode("latin-1"))
    assert not _read_then_edit(run, "l.txt", "prix", "cost").is_error
    data = path.read_bytes()
    assert data.startswith(b"cost: 5 ") and data.endswith("café\n".encode("latin-1"))


def test_cp1251_edit_preserves_encoding(workspace: Path, run) -> None:
    path = workspace / "ru.py"
    path.write_bytes("# -*- coding: cp1251 -*-\ntext = 'Привет, мир!'\n".encode("cp1251"))
    assert not _read_then_edit(run, "ru.py", "Привет", "Здравствуй").is_error
    assert (
        path.read_bytes().decode("cp1251")
        == "# -*- coding: cp1251 -*-\ntext = 'Здравствуй, мир!'\n"
    )


def test_unencodable_replacement_refused_file_untouched(workspace: Path, run) -> None:
    path = workspace / "l.txt"
    original = "café\n".encode("latin-1")
    path.write_bytes(original)
    result = _read_then_edit(run, "l.txt", "café", "咖啡")
    assert result.is_error and path.read_bytes() == original


def test_backrefs_and_regex_chars_are_literal(workspace: Path, run) -> None:
    path = workspace / "r.txt"
    path.write_text("a.b*(c) = X\n")
    assert not _read_then_edit(run, "r.txt", "a.b*(c)", r"\1 $& \g<0>").is_error
    assert path.read_text() == "\\1 $& \\g<0> = X\n"


def test_mode_kept_and_no_temp_files_left(workspace: Path, run) -> None:
    path = workspace / "s.sh"
    path.write_text("echo hi\n")
    path.chmod(0o751)
    assert not _read_then_edit(run, "s.sh", "hi", "ho").is_error
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert sorted(os.listdir(workspace)) == ["s.sh"]


def test_edit_binary_and_directory_refused(workspace: Path, run) -> None:
    (workspace / "d").mkdir()
    assert run("edit_file", path="d", old_string="a", new_string="b").is_error
    assert (workspace / "d").is_dir()
    assert run("edit_file", path="missing.txt", old_string="a", new_string="b").is_error
    assert not (workspace / "missing.txt").exists()


def test_write_creates_parents(workspace: Path, run) -> None:
    result = run("write_file", path="deep/er/new.txt", content="hi\n")
    assert not result.is_error and "Created" in result.text()
    assert (workspace / "deep/er/new.txt").read_text() == "hi\n"
    assert result.metadata["mutated"] == ["deep/er/new.txt"]


def test_write_overwrite_needs_read(workspace: Path, run) -> None:
    path = workspace / "old.txt"
    path.write_text("old\n")
    result = run("write_file", path="old.txt", content="new\n")
    assert result.is_error and path.read_text() == "old\n"
    run("read_file", path="old.txt")
    result = run("write_file", path="old.txt", content="new\n")
    assert not result.is_error and path.read_text() == "new\n"
    assert "-old" in result.text() and "+new" in result.text()


def test_writing_the_same_content_changes_nothing(workspace: Path, run) -> None:
    """The same content again (line endings kept as the file has them) is no write: the
    file is untouched and the call reports no change, so nothing asks to verify it."""
    path = workspace / "same.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert not run("read_file", path="same.txt").is_error
    result = run("write_file", path="same.txt", content="one\ntwo\n")
    assert not result.is_error and "nothing was written" in result.text()
    assert result.metadata["mutated"] == []
    assert path.stat().st_mtime_ns == 1_000_000_000 and path.read_bytes() == b"one\r\ntwo\r\n"


def test_write_keeps_crlf_and_bom_of_existing_file(workspace: Path, run) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    run("read_file", path="w.txt")
    assert not run("write_file", path="w.txt", content="x\ny\n").is_error
    assert path.read_bytes() == b"\xef\xbb\xbfx\r\ny\r\n"


@pytest.mark.parametrize("bad", ["../out.txt", "/etc/mycode-test", "~/x.txt", "a\x00b"])
def test_write_outside_refused(workspace: Path, run, bad: str) -> None:
    result = run("write_file", path=bad, content="x")
    assert result.is_error
    assert not (workspace.parent / "out.txt").exists()
    assert not Path("/etc/mycode-test").exists()


def test_write_through_symlink_escape_refused(workspace: Path, run, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "escape").symlink_to(outside)
    result = run("write_file", path="escape/x.txt", content="x")
    assert result.is_error and not (outside / "x.txt").exists()


def test_an_edit_of_the_same_size_never_runs_stale_bytecode(tmp_path: Path) -> None:
    """CPython's .pyc check is mtime-in-seconds + size: an edit must drop the cached copy."""
    import subprocess
    import sys

    from mycode_builtin_tools.atomic import atomic_write

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def add_2_3() -> str:
        done = subprocess.run(
            [sys.executable, "-c", "import calc; print(calc.add(2, 3))"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout.strip()

    source = tmp_path / "calc.py"
    source.write_text("def add(a, b):\n    return a - b\n")
    assert add_2_3() == "-1"  # leaves __pycache__/calc.*.pyc behind
    assert list((tmp_path / "__pycache__").glob("calc.*.pyc"))
    atomic_write(source, b"def add(a, b):\n    return a + b\n")  # same size, same second
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns))
    assert add_2_3() == "5"
