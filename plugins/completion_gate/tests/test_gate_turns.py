"""The gate across the turns of one interactive session (in-process runner, tools run for
real)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import BIN, FIX, READ, TESTS, guidance, say, tool

from mycode_core.testing import installed_plugin, make_runner, run_events


def _events(events: list[Any]) -> list[dict[str, Any]]:
    return [event.model_dump() for event in events]


@pytest.mark.parametrize("later", ["notes.txt", "util.py"])
def test_a_later_documentation_only_turn_needs_no_new_test_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, later: str
) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    turns = [READ, FIX, TESTS, say("Fixed add(); 1 test passed.")]
    turns += [tool("write_file", path=later, content="x = 1\n"), say("Wrote it.")]
    turns += [say("Wrote it."), say("Wrote it."), say("Wrote it.")]  # the gate's retries
    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        installed_plugin("completion_gate"),
        turns=turns,
        ask=lambda question, options, *_: options[0],
        permission_mode="bypass",
    )
    ws = runner.workspace
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (ws / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", encoding="utf-8"
    )
    first = _events(run_events(runner, "Fix add in calc.py and run the tests", close=False))
    assert (first[-1]["stop_reason"], first[-1]["verdict"]) == ("completed", "pass"), first[-1]
    second = _events(run_events(runner, f"write {later}"))
    if later == "notes.txt":  # documentation: the passing run before it still holds
        assert guidance(second) == []
        assert (second[-1]["stop_reason"], second[-1]["verdict"]) == ("completed", "pass")
    else:  # code: the test run before it does not cover it
        assert "You changed util.py after the last test run" in guidance(second)[0]
        assert second[-1]["verdict"] == "fail"
