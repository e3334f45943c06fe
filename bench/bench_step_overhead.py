"""Per-step runtime overhead at a short and a long history.

Builds an :class:`~mycode_core.runtime.loop.AgentRunner` in-process with the scripted provider
(``scripted:PATH``) and a no-op tool, pre-fills its history with N steps (an assistant tool
call and its result each), then times a run of K more steps. The model and the tool cost
nothing, so what is measured is the runtime itself: history, model view, tool orchestration,
observations, policies, events and the transcript. Goal: ms/step at 2,000 steps of history at
most 1.5x the figure at 10.

    uv run python bench/bench_step_overhead.py [--steps 200] [--repeat 7] [--plugins]

``--plugins`` also loads the installed plugins (entry points) instead of the core alone.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from mycode_core import hookimpl
from mycode_core.config import Settings
from mycode_core.plugins import get_plugin_manager
from mycode_core.records import Tool
from mycode_core.runtime.child import run_child
from mycode_core.runtime.loop import AgentRunner

GOAL = 1.5
HISTORY_SIZES = (10, 2000)


class NoopTools:
    """A plugin with one tool that does nothing (distinct results, so no stagnation)."""

    @hookimpl
    def register_tools(self, register: Any, context: Any) -> None:
        register(
            Tool(
                name="noop",
                description="Does nothing.",
                handler=lambda arguments, _context: f"ok {arguments.get('i')}",
                input_schema={"type": "object", "properties": {"i": {"type": "integer"}}},
                concurrency_safe=True,
                read_only=True,
            )
        )


def prior_history(steps: int) -> list[dict[str, Any]]:
    """A task and ``steps`` earlier tool steps, as chat messages."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "an earlier task"}]
    for i in range(steps):
        call_id = f"old_{i}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "noop", "arguments": json.dumps({"i": -i})},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"ok {-i}"})
    return messages


def time_run(history_steps: int, steps: int, folder: Path, with_plugins: bool) -> float:
    """Seconds per step of one run of ``steps`` tool steps after ``history_steps`` old ones."""
    script = folder / f"script-{history_steps}.json"
    turns = [
        {"tool_calls": [{"id": f"c{i}", "name": "noop", "arguments": {"i": i}}]}
        for i in range(steps)
    ]
    script.write_text(json.dumps(turns + [{"content": "done"}]), encoding="utf-8")
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(model=f"scripted:{script}", max_steps=steps + 10)
    runner = AgentRunner(
        spawn_child=run_child,
        pm=get_plugin_manager(extra_plugins=[NoopTools()], load_entry_points=with_plugins),
        settings=settings,
        workspace=workspace,
        home=folder / "home",
        session_id=f"bench-{history_steps}-{time.monotonic_ns()}",
        prior_messages=prior_history(history_steps),
    )
    runner.prepare()
    started = time.perf_counter()
    events = list(runner.run("continue"))
    elapsed = time.perf_counter() - started
    runner.close()
    result = events[-1]
    finished = (getattr(result, "stop_reason", None), getattr(result, "steps", None))
    if finished != ("completed", steps + 1):
        raise SystemExit(f"unexpected end of the benchmark run: {result}")
    return elapsed / (steps + 1)


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="steps per timed run")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per history size")
    parser.add_argument("--plugins", action="store_true", help="load installed plugins too")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mycode-bench-steps-"))
    time_run(10, 5, folder, args.plugins)  # warm-up: imports, tokenizer
    samples: dict[int, list[float]] = {size: [] for size in HISTORY_SIZES}
    for _ in range(args.repeat):  # interleaved, so background noise hits both sizes alike
        for size in HISTORY_SIZES:
            gc.collect()
            samples[size].append(time_run(size, args.steps, folder, args.plugins))
    results = {size: statistics.median(values) for size, values in samples.items()}
    what = "core + installed plugins" if args.plugins else "core only"
    print(f"per-step overhead, median of {args.repeat} runs of {args.steps} steps ({what}):")
    for size, value in results.items():
        print(f"  history of {size:>5} steps: {value * 1000:7.2f} ms/step")
    ratio = results[HISTORY_SIZES[1]] / results[HISTORY_SIZES[0]]
    verdict = "meets" if ratio <= GOAL else "MISSES"
    print(
        f"ratio {HISTORY_SIZES[1]}/{HISTORY_SIZES[0]} = {ratio:.2f} "
        f"({verdict} the goal of <= {GOAL})"
    )


if __name__ == "__main__":
    main()
