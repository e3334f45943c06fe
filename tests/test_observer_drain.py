"""SPEC §7 "Observers" (issue 18 item 3): every event, ``result`` included, before exit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mycode_core.observers import drain_observers
from mycode_core.testing.cli import run_cli, write_plugin_dist, write_script

SLOW = """
import os, time
from mycode_core import hookimpl

@hookimpl
def on_event(event):
    time.sleep(float(os.environ["SLOW_S"]))
    with open(os.environ["SEEN_FILE"], "a") as fh:
        fh.write(event.type + "\\n")
"""


def _run(tmp_path: Path, slow_s: float, config: str = "") -> tuple[list[str], str]:
    site = tmp_path / "site"
    write_plugin_dist(site, "slowobs", SLOW)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n", "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(config, "utf-8")
    seen = tmp_path / "seen.txt"
    calls = [{"name": "read_file", "arguments": {"path": "a.txt"}}]
    script = write_script(tmp_path / "s.json", [{"tool_calls": calls}, {"content": "done"}])
    result = run_cli(
        ["-p", "read a.txt", "--model", script],
        cwd=workspace,
        home=home,
        env={"SLOW_S": str(slow_s), "SEEN_FILE": str(seen)},
        pythonpath=[site],
    )
    assert result.rc == 0, result.stderr
    (transcript,) = (home / "sessions").glob("*.jsonl")
    assert '"type":"result"' in transcript.read_text("utf-8").splitlines()[-1]  # result is last
    lines = seen.read_text("utf-8").split() if seen.exists() else []
    return lines, result.stderr


def test_a_slow_observer_gets_every_event_result_included_and_is_named_once(
    tmp_path: Path,
) -> None:
    seen, stderr = _run(tmp_path, 0.6, "[plugins]\nobserver_drain_s = 60\n")
    # result stays last, also when the slow observer's notice comes once the turn is over
    assert seen[0] == "system" and seen[-1] == "result"
    assert "tool_result" in seen
    slow = [line for line in stderr.splitlines() if "slow on_event observer" in line]
    assert len(slow) == 1 and "'slowobs'" in slow[0]


def test_past_observer_drain_s_one_line_names_the_plugin_and_the_missed_events(
    tmp_path: Path,
) -> None:
    seen, stderr = _run(tmp_path, 0.5, "[plugins]\nobserver_drain_s = 0.5\n")
    (line,) = [line for line in stderr.splitlines() if "did not receive" in line]
    match = re.search(r"observer plugin 'slowobs' did not receive (\d+) event", line)
    assert match is not None, line
    missed = int(match.group(1))
    assert missed > 0 and "result" not in seen


def test_drain_observers_with_nothing_open_returns_at_once() -> None:
    assert drain_observers(0.1) == {}


@pytest.mark.parametrize("value", ["-1", '"ten"'])
def test_a_bad_observer_drain_s_is_one_readable_line(tmp_path: Path, value: str) -> None:
    (tmp_path / "ws").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"[plugins]\nobserver_drain_s = {value}\n", "utf-8")
    result = run_cli(["-p", "hi", "--model", "scripted:none"], cwd=tmp_path / "ws", home=home)
    assert result.rc == 2 and "observer_drain_s" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_missed_count_includes_the_event_still_being_handled(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import threading
    from types import SimpleNamespace

    import pluggy

    from mycode_core import hookimpl, hookspecs
    from mycode_core.events import NoticeEvent
    from mycode_core.observers import ObserverPool

    release = threading.Event()

    class Stuck:
        @hookimpl
        def on_event(self, event: object) -> None:
            release.wait(10)

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(Stuck(), name="stuck")
    pool = ObserverPool(pm, SimpleNamespace(settings=None), lambda plugin, message: None)
    for n in range(3):
        pool.publish(NoticeEvent(level="info", message=str(n)))
    try:
        assert pool.close(timeout=0.2) == {"stuck": 3}  # one in hand, two queued
    finally:
        release.set()
    assert "observer plugin 'stuck' did not receive 3 event(s)" in capfd.readouterr().err
