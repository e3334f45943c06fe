"""Subagents (issue 11): the cost of delegating, and read-only children in parallel.

1. Overhead per child: an in-process :class:`~mycode_core.runtime.loop.AgentRunner` with the
   scripted provider and a no-op tool does N x S tool steps itself, then the same work is
   delegated to N ``general`` children of S steps each (the script is shared along the agent
   tree, see ``ScriptedModel.fork``). ``(delegated - direct) / N`` is the cost of one child:
   its runner, system prompt, transcript, the delegate turn and the child's answer turn.
   Goal: at most 20 ms per child.
2. Parallel read-only children: ``mycode -p`` against the local fake server, whose answers to
   each child take 1 s. The wall time from the parent's first ``delegate_task`` call to its last
   result (from the stream-json timestamps, so process start-up is left out) with 3 ``explore``
   children in one reply is compared with 1 child. Goal: 3 children take about as long as 1
   (ratio <= 1.3), not 3x.

    uv run python bench/bench_subagents.py [--children 10] [--steps 5] [--repeat 7] [--latency 1]
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from common import (
    NoopTools,
    bench_dir,
    bench_options,
    interleaved,
    noop_turn,
    timed_run,
    write_turns,
)

from mycode_core.config import Settings
from mycode_core.events import ToolResultEvent
from mycode_core.plugins import get_plugin_manager
from mycode_core.runtime.child import run_child
from mycode_core.runtime.loop import AgentRunner

OVERHEAD_GOAL_MS = 20.0
PARALLEL_GOAL = 1.3


def scripts(children: int, steps: int) -> tuple[list[Any], list[Any]]:
    """The direct script and the delegated one (same tool work)."""
    direct = [noop_turn(i) for i in range(children * steps)] + [{"content": "done"}]
    delegated: list[Any] = []
    for child in range(children):
        task = {"task": f"do part {child}", "agent": "general"}
        delegated.append(
            {"tool_calls": [{"id": f"d{child}", "name": "delegate_task", "arguments": task}]}
        )
        delegated += [noop_turn(child * steps + i) for i in range(steps)]
        delegated.append({"content": f"part {child} done"})
    delegated.append({"content": "done"})
    return direct, delegated


def time_run(turns: list[Any], folder: Path, name: str) -> float:
    """Seconds for one in-process run of ``turns``."""
    import mycode_subagents.plugin as subagents

    model = write_turns(folder / f"{name}.json", turns)
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(model=model, max_steps=len(turns) + 10)
    runner = AgentRunner(
        spawn_child=run_child,
        pm=get_plugin_manager(extra_plugins=[NoopTools(), subagents], load_entry_points=False),
        settings=settings,
        workspace=workspace,
        home=folder / "home",
        session_id=f"bench-{name}-{time.monotonic_ns()}",
    )
    elapsed, events = timed_run(runner, "go")
    if getattr(events[-1], "stop_reason", None) != "completed":
        raise SystemExit(f"unexpected end of the benchmark run: {events[-1]}")
    failed = [e for e in events if isinstance(e, ToolResultEvent) and e.is_error]
    if failed:
        raise SystemExit(f"a tool failed in the benchmark run: {failed[0]}")
    return elapsed


def overhead(children: int, steps: int, repeat: int) -> float:
    """Median milliseconds one child costs over doing its work in the parent."""
    folder = bench_dir("subagents")
    direct, delegated = scripts(children, steps)
    time_run(delegated[: 3 + steps], folder, "warm")  # imports, tokenizer
    samples = interleaved(
        {"direct": ("direct", direct), "delegated": ("delegated", delegated)},
        repeat,
        lambda variant: time_run(variant[1], folder, variant[0]),
        warm_up=False,
        collect=True,
    )
    direct_s = statistics.median(samples["direct"])
    delegated_s = statistics.median(samples["delegated"])
    print(f"overhead: {children} children x {steps} steps, median of {repeat} runs")
    print(f"  the work in the parent:  {direct_s * 1000:8.1f} ms")
    print(f"  delegated to children:   {delegated_s * 1000:8.1f} ms")
    per_child = (delegated_s - direct_s) / children * 1000
    verdict = "meets" if per_child <= OVERHEAD_GOAL_MS else "MISSES"
    print(f"  per child: {per_child:.2f} ms ({verdict} the goal of <= {OVERHEAD_GOAL_MS} ms)")
    return per_child


def parallel(latency: float) -> float:
    """Wall of 3 read-only children over 1, through ``mycode -p`` and the fake server."""
    from mycode_core.testing import FakeOpenAIServer, delayed, run_cli, turn

    folder = bench_dir("parallel")
    workspace = folder / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")

    def wall(count: int) -> float:
        markers = [f"KID-{i}:" for i in range(count)]
        delegate = [
            {"id": f"d{i}", "name": "delegate_task", "arguments": {"task": f"{m} look",
                                                                   "agent": "explore"}}
            for i, m in enumerate(markers)
        ]  # fmt: skip
        with FakeOpenAIServer([turn(None, delegate), turn("done")]) as server:
            for marker in markers:
                server.route(marker, delayed(latency, turn("x is 1")))
            args = ["-p", "PARENT", "--model", "m", "--base-url", server.base_url,
                    "--api-key", "x", "--output-format", "stream-json"]  # fmt: skip
            result = run_cli(args, workspace, folder / "home", timeout=120)
        if result.rc != 0:
            raise SystemExit(f"benchmark run failed: {result.stderr}")
        main = [e for e in result.events if not e.get("agent_id")]
        started = min(e["ts"] for e in main if e["type"] == "tool_call")
        ended = max(e["ts"] for e in main if e["type"] == "tool_result")
        return float(ended - started)

    one = statistics.median(wall(1) for _ in range(3))
    three = statistics.median(wall(3) for _ in range(3))
    ratio = three / one
    verdict = "meets" if ratio <= PARALLEL_GOAL else "MISSES"
    print(f"parallel read-only children, {latency:.1f} s model latency each (median of 3):")
    print(f"  1 child:    {one:6.2f} s")
    print(
        f"  3 children: {three:6.2f} s  (ratio {ratio:.2f}, {verdict} the goal <= {PARALLEL_GOAL})"
    )
    return ratio


def main() -> None:
    """Measure and print the figures."""
    args = bench_options(
        __doc__,
        children=10,
        steps=(5, "tool steps per child"),
        repeat=7,
        latency=(1.0, "seconds per child answer"),
    )
    overhead(args.children, args.steps, args.repeat)
    parallel(args.latency)


if __name__ == "__main__":
    main()
