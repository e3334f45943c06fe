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

import json
import time
from pathlib import Path
from typing import Any

from common import (
    NoopTools,
    bench_dir,
    bench_options,
    interleaved,
    medians,
    noop_turn,
    timed_run,
    write_turns,
)

from mycode_core.config import Settings
from mycode_core.plugins import get_plugin_manager
from mycode_core.runtime.child import run_child
from mycode_core.runtime.loop import AgentRunner

GOAL = 1.5
HISTORY_SIZES = (10, 2000)


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
    turns = [noop_turn(i) for i in range(steps)]
    model = write_turns(folder / f"script-{history_steps}.json", turns + [{"content": "done"}])
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(model=model, max_steps=steps + 10)
    tools = NoopTools(concurrency_safe=True)
    runner = AgentRunner(
        spawn_child=run_child,
        pm=get_plugin_manager(extra_plugins=[tools], load_entry_points=with_plugins),
        settings=settings,
        workspace=workspace,
        home=folder / "home",
        session_id=f"bench-{history_steps}-{time.monotonic_ns()}",
        prior_messages=prior_history(history_steps),
    )
    elapsed, events = timed_run(runner, "continue")
    result = events[-1]
    finished = (getattr(result, "stop_reason", None), getattr(result, "steps", None))
    if finished != ("completed", steps + 1):
        raise SystemExit(f"unexpected end of the benchmark run: {result}")
    return elapsed / (steps + 1)


def main() -> None:
    """Measure and print the figures."""
    args = bench_options(
        __doc__,
        steps=(200, "steps per timed run"),
        repeat=(7, "timed runs per history size"),
        plugins=(False, "load installed plugins too"),
    )
    folder = bench_dir("steps")
    time_run(10, 5, folder, args.plugins)  # warm-up: imports, tokenizer
    samples = interleaved(
        {str(size): size for size in HISTORY_SIZES},
        args.repeat,
        lambda size: time_run(size, args.steps, folder, args.plugins),
        warm_up=False,
        collect=True,
    )
    results = {int(size): value for size, value in medians(samples).items()}
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
