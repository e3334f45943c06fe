"""Per-call overhead of the core's tool machinery for a no-op ``@tool``.

A read-only ``@tool`` with a ``ReadPath`` parameter that does nothing is called through the
real path (the orchestrator of a prepared :class:`~mycode_core.runtime.loop.AgentRunner`:
schema check, the workspace boundary, plan-mode check, ``permission_verdict`` through pluggy
with the default policy of ``builtin_tools``, the handler thread, the path facts, the change
watch and the observation), and compared with calling the function directly. Goal: at most
0.5 ms per call more.

    uv run python bench/bench_tool_overhead.py [--calls 2000]
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from common import bench_options, timed_call

from mycode_core import ReadPath, hookimpl, tool
from mycode_core.records import ToolCall
from mycode_core.testing import make_runner

GOAL_MS = 0.5


@tool(read_only=True)
def noop(path: ReadPath) -> str:
    """Do nothing with a file."""
    return "ok"


class Plugin:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(noop)


def main() -> None:
    args = bench_options(None, calls=2000, repeat=5)
    import mycode_builtin_tools

    with tempfile.TemporaryDirectory() as tmp:
        runner = make_runner(Path(tmp), Plugin(), mycode_builtin_tools, turns=[])
        runner.prepare()
        (runner.workspace / "a.txt").write_text("x")
        orchestrator = runner.orchestrator
        runner.events.emit = lambda event: None  # type: ignore[method-assign]
        calls = [
            ToolCall(id=f"c{i}", name="noop", arguments={"path": "a.txt"})
            for i in range(args.calls)
        ]
        direct, full = [], []
        target = runner.workspace / "a.txt"
        for _ in range(args.repeat):

            def handlers() -> None:
                for _call in calls:
                    noop.handler({"path": target}, runner.context)

            def through_core() -> None:
                for call in calls:
                    orchestrator.run([call.model_copy()])

            direct.append(timed_call(handlers)[0] / args.calls * 1000)
            full.append(timed_call(through_core)[0] / args.calls * 1000)
        mechanism = runner.changes.mechanism if runner.changes else "none"
        runner.close()
    d, f = statistics.median(direct), statistics.median(full)
    print(f"direct call:        {d:.4f} ms")
    print(f"through the core:   {f:.4f} ms  (change watch: {mechanism})")
    print(f"overhead per call:  {f - d:.4f} ms  (goal <= {GOAL_MS} ms)")


if __name__ == "__main__":
    main()
