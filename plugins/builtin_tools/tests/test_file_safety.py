"""Issue 13 file-tool cases: symlink races, special files, concurrent writers, encodings."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mycode_builtin_tools import ripgrep

from mycode_core import safeopen
from mycode_core.testing import cli_env, write_script

SECRET = "outside-secret-value"


def test_symlink_swapped_in_after_the_check_is_never_followed(
    workspace: Path, tmp_path: Path, run
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    target = workspace / "racy.txt"
    target.write_text("harmless\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            tmp = workspace / "racy.tmp"
            try:
                tmp.unlink(missing_ok=True)
                tmp.symlink_to(outside)
                os.replace(tmp, target)
                tmp.write_text("harmless\n")
                os.replace(tmp, target)
            except OSError:
                pass

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        leaks = 0
        writes_outside = 0
        for _ in range(400):
            result = run("read_file", path="racy.txt")
            leaks += SECRET in result.text()
            run("write_file", path="racy.txt", content="written\n")
            writes_outside += outside.read_text() != SECRET
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert leaks == 0 and writes_outside == 0


def test_safeopen_refuses_symlinks_anywhere_on_the_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "flink").symlink_to(tmp_path / "real" / "f")
    assert safeopen.read_bytes(tmp_path / "real" / "f")[0] == b"x"
    for bad in (tmp_path / "link" / "f", tmp_path / "flink"):
        with pytest.raises(safeopen.SymlinkRace):
            safeopen.read_bytes(bad)
    with pytest.raises(safeopen.SymlinkRace):
        safeopen.replace_atomically(tmp_path / "link" / "g", b"y", 0o644, create_parents=False)
    assert not (tmp_path / "real" / "g").exists()


def test_grep_fallback_skips_symlinks_fifos_and_devices(
    workspace: Path, tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "outside.txt").write_text(f"needle {SECRET}\n")
    (workspace / "real.txt").write_text("needle here\n")
    (workspace / "link.txt").symlink_to(tmp_path / "outside.txt")
    (workspace / "linkdir").symlink_to(tmp_path)
    os.mkfifo(workspace / "pipe")
    if os.geteuid() == 0:
        os.mknod(workspace / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    monkeypatch.setenv("MYCODE_RG", "none")
    ripgrep.rg_path.cache_clear()
    try:
        assert ripgrep.rg_path() is None
        result = run("grep", pattern="needle", output_mode="content")
        assert "real.txt" in result.text() and SECRET not in result.text()
        alone = run("grep", pattern="needle", path="pipe")
        assert SECRET not in alone.text()
    finally:
        monkeypatch.delenv("MYCODE_RG")
        ripgrep.rg_path.cache_clear()


def test_write_file_keeps_a_legacy_encoding_or_says_what_it_did(workspace: Path, run) -> None:
    path = workspace / "latin.txt"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    assert not run("read_file", path="latin.txt").is_error
    result = run("write_file", path="latin.txt", content="d\xe9j\xe0 vu\n")
    assert not result.is_error and path.read_bytes() == "d\xe9j\xe0 vu\n".encode("latin-1")
    assert not run("read_file", path="latin.txt").is_error
    result = run("write_file", path="latin.txt", content="snow \u2603\n")
    assert not result.is_error and "UTF-8" in result.text() and "cannot hold" in result.text()
    assert path.read_bytes() == "snow \u2603\n".encode()


def _editor_script(path: Path, tag: str, count: int) -> str:
    turns = []
    for i in range(count):
        turns.append(
            {
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "shared.txt"}},
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "shared.txt",
                            "old_string": "END\n",
                            "new_string": f"{tag}-{i}\nEND\n",
                        },
                    },
                ]
            }
        )
    turns.append({"content": "done"})
    return write_script(path, turns)


def test_two_processes_editing_one_file_lose_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("START\nEND\n")
    count = 150
    procs = []
    for tag in ("A", "B"):
        model = _editor_script(tmp_path / f"{tag}.json", tag, count)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mycode_core",
                    "-p",
                    "edit",
                    "--model",
                    model,
                    "--output-format",
                    "stream-json",
                    "--max-steps",
                    str(count + 5),
                    "--completion-policy",
                    "off",
                ],
                cwd=ws,
                env=cli_env(tmp_path / f"home-{tag}"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
        )
    reported: list[str] = []
    deadline = time.monotonic() + 600
    for proc in procs:
        out, err = proc.communicate(timeout=max(10, deadline - time.monotonic()))
        assert proc.returncode == 0, err
        calls = {}
        for line in out.splitlines():
            event = json.loads(line)
            if event["type"] == "tool_call" and event["name"] == "edit_file":
                calls[event["id"]] = event["arguments"]["new_string"].split("\n")[0]
            if event["type"] == "tool_result" and event["id"] in calls and not event["is_error"]:
                reported.append(calls[event["id"]])
    final = (ws / "shared.txt").read_text().splitlines()
    missing = [tag for tag in reported if tag not in final]
    assert not missing, f"{len(missing)} reported edits are not in the file"
    assert len(final) == len(reported) + 2 and final[0] == "START" and final[-1] == "END"
    assert reported  # some edits did happen
