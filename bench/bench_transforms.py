"""Issue 18: the transform chain's cost per tool call, and how long exit waits for observers.

1. ``transform_tool_result`` chain per call, called as the orchestrator calls it: with no
   implementation (goal ≤ 0.05 ms) and with one no-op implementation (report).
2. Exit delay after the ``result`` line of a real ``mycode -p`` run (stream-json): with an
   observer sleeping 0.5 s per event on a ~37-event run (report; bounded by
   ``[plugins] observer_drain_s``, default 10 s) and with no slow observer (goal ≤ 50 ms).

    uv run python bench/bench_transforms.py [--calls 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path
from typing import Any

from common import bench_dir, clean_env, median_ms, mycode_script, write_turns

from mycode_core import hookimpl
from mycode_core.records import ToolCall, ToolResult
from mycode_core.runtime.hookcalls import HookGuard
from mycode_core.runtime.lifecycle import transform_tool_result
from mycode_core.testing import make_context, make_plugin_manager

GOAL_NONE_MS = 0.05
GOAL_EXIT_MS = 50.0

SLOW_OBSERVER = """
import time
from mycode_core import hookimpl

@hookimpl
def on_event(event):
    time.sleep(0.5)
"""


class NoOp:
    @hookimpl
    def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> None:
        return None


def chain_ms(plugins: list[object], calls: int, tmp: Path) -> float:
    """Median ms per call of the chain over 5 rounds of ``calls`` calls."""
    pm = make_plugin_manager(*plugins)
    guard = HookGuard(pm, lambda event: None)
    context = make_context(tmp)
    call = ToolCall(id="c1", name="noop", arguments={})
    result = ToolResult(content="ok")
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            transform_tool_result(guard, call, None, result, context)
        rounds.append((time.perf_counter() - started) / calls)
    return median_ms(rounds)


def exit_delay(slow: bool, root: Path) -> tuple[float, int]:
    """Seconds from the ``result`` line to the process's exit, and the events of the run."""
    site = root / "site"
    env_extra: dict[str, str] = {}
    if slow:
        from mycode_core.testing.cli import write_plugin_dist

        write_plugin_dist(site, "slowobs", SLOW_OBSERVER)
        env_extra["PYTHONPATH"] = str(site)
    workspace = root / "ws"
    workspace.mkdir(exist_ok=True)
    turns: list[Any] = []
    for n in range(5):
        (workspace / f"f{n}.txt").write_text(f"{n}\n")
        turns.append({"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{n}.txt"}}]})
    script = write_turns(root / "turns.json", [*turns, {"content": "ok"}])
    home = root / "home"
    home.mkdir(exist_ok=True)
    command = [mycode_script(), "-p", "go", "--model", script, "--output-format", "stream-json"]
    env = clean_env(home, **env_extra)
    process = subprocess.Popen(
        command, cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    events = 0
    at_result = None
    for line in process.stdout:
        events += 1
        if b'"type": "result"' in line or b'"type":"result"' in line:
            at_result = time.perf_counter()
    process.wait()
    ended = time.perf_counter()
    if at_result is None:
        raise SystemExit("no result line")
    return ended - at_result, events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tmp = bench_dir("transforms")
    none = chain_ms([], args.calls, tmp)
    one = chain_ms([NoOp()], args.calls, tmp)
    print(f"transform chain, no implementation: {none:.4f} ms/call (goal <= {GOAL_NONE_MS})")
    print(f"transform chain, one no-op implementation: {one:.4f} ms/call")
    fast = [exit_delay(False, bench_dir("exit-fast")) for _ in range(args.runs)]
    slow = exit_delay(True, bench_dir("exit-slow"))
    print(
        f"exit after result, no slow observer: {median_ms(d for d, _ in fast):.1f} ms "
        f"(goal <= {GOAL_EXIT_MS}; {fast[0][1]} events)"
    )
    print(f"exit after result, 0.5 s/event observer: {slow[0] * 1000:.0f} ms ({slow[1]} events)")


if __name__ == "__main__":
    main()
