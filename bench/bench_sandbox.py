"""Benchmark: the cost of the command sandbox and of the permission decision (issue 13).

* ``run_command("true")`` wall time, sandboxed (bubblewrap) vs not (``sandbox = "off"``),
  median of N interleaved runs — goal: at most 30 ms extra per command.
* The permission decision for 1 MB command lines (plain, ``:(){ `` repeated, a 500,000-command
  pipeline) and for a 60,000-character one just under the parsing limit — goal: < 1 s.

Run: ``uv run python bench/bench_sandbox.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path

from common import median_ms, timed_call
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.permissions.policy import decide
from mycode_builtin_tools.tools.run_command import run_command

from mycode_core.config import Settings
from mycode_core.records import RunContext, Tool, ToolCall


def _context(workspace: Path, home: Path, mode: str) -> RunContext:
    return RunContext(
        workspace=workspace, home=home, settings=Settings(sandbox=mode), session_id="bench"
    )


def _command_cost(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        modes = ["off", "auto"] if sandbox.bwrap_path() else ["off"]
        times: dict[str, list[float]] = {mode: [] for mode in modes}
        contexts = {mode: _context(ws, home, mode) for mode in modes}
        for mode in modes:  # warm-up
            run_command.handler({"command": "true"}, contexts[mode])
        for _ in range(runs):
            for mode in modes:
                context = contexts[mode]
                call = partial(run_command.handler, {"command": "true"}, context)
                took, result = timed_call(call)
                times[mode].append(took)
                assert result.metadata["sandboxed"] is (mode == "auto")
        plain = median_ms(times["off"])
        print(f"run_command('true') unsandboxed: {plain:.1f} ms (median of {runs})")
        if "auto" in times:
            boxed = median_ms(times["auto"])
            extra = boxed - plain
            verdict = "OK" if extra <= 30 else "OVER"
            print(f"run_command('true') sandboxed:   {boxed:.1f} ms  extra {extra:.1f} ms "
                  f"(goal <= 30 ms: {verdict})")  # fmt: skip
        else:
            print(f"no sandbox here: {sandbox.unavailable_reason()}")


def _decision_cost() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        tool = Tool(name="run_command", description="x", input_schema={"type": "object"},
                    handler=lambda a, c: "", plugin="builtin_tools")  # fmt: skip
        cases = {
            "1 MB of 'a'": "a" * 1_000_000,
            "1 MB ':(){ '": ":(){ " * 200_000,
            "1 MB pipeline": "x|" * 500_000,
            "60 KB pipeline": "x|" * 30_000,
            "60 KB plain": "echo " + "a" * 60_000,
        }
        for mode in ("auto", "off"):
            context = _context(ws, ws / "home", mode)
            for name, command in cases.items():
                call = ToolCall(id="b", name="run_command", arguments={"command": command})
                started = time.perf_counter()
                verdict = decide(call, tool, context)
                took = time.perf_counter() - started
                print(f"decide({name}, sandbox={mode}): {took * 1000:.1f} ms -> "
                      f"{verdict.decision} {verdict.rule} (goal < 1 s)")  # fmt: skip


def main() -> None:
    """Print both figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    _command_cost(args.runs)
    _decision_cost()


if __name__ == "__main__":
    main()
