"""Overhead of Claude Code hooks (plugin ``claude_compat``) per tool call.

Three set-ups, each an in-process :class:`~mycode_core.runtime.loop.AgentRunner` with the
scripted provider, a no-op tool and the ``claude_compat`` plugin, timed over a run of N tool
steps (median of R runs, set-ups interleaved):

* ``none``  — no hooks configured;
* ``miss``  — PreToolUse and PostToolUse hooks configured for other tools only (matcher miss);
* ``noop``  — a no-op command hook (``true``) on PreToolUse and PostToolUse of the tool.

It also times the plugin's own hook implementations directly (``permission_verdict`` +
``tool_result_verdict`` through ``pm.hook``) with matcher-miss hooks against the same calls
without the plugin, which isolates the miss cost from the loop's noise. Goal: miss ≤ 0.2 ms.

    uv run python bench/bench_cc_hooks.py [--steps 200] [--repeat 5]
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from common import NoopTools, bench_options, interleaved, medians, noop_turn, timed_run, write_turns

from mycode_core.config import Settings
from mycode_core.plugins import get_plugin_manager
from mycode_core.records import Tool, ToolCall, ToolResult
from mycode_core.runtime.child import run_child
from mycode_core.runtime.loop import AgentRunner

GOAL_MS = 0.2


def _hooks(matcher: str, command: str) -> dict[str, Any]:
    group = [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]
    return {"hooks": {"PreToolUse": group, "PostToolUse": group}}


SETUPS = {
    "none": None,
    "miss": _hooks("Bash|Write|Edit|mcp__.*", "true"),
    "noop": _hooks("noop", "true"),
}


def _pm(with_compat: bool = True) -> Any:
    import mycode_claude_compat.plugin as plugin

    extra: list[object] = [NoopTools()]
    if with_compat:
        extra.append(plugin)
    return get_plugin_manager(extra_plugins=extra, load_entry_points=False)


def run_once(root: Path, setup: str, steps: int) -> float:
    """Seconds for one run of ``steps`` tool steps under ``setup``."""
    home = root / f"home-{setup}"
    workspace = root / "ws"
    home.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(exist_ok=True)
    hooks = SETUPS[setup]
    if hooks is not None:
        (home / "hooks.json").write_text(json.dumps(hooks))
    turns = [noop_turn(i) for i in range(steps)]
    model = write_turns(root / "script.json", [*turns, {"content": "done"}])
    settings = Settings.model_validate(
        {"model": model, "max_steps": steps + 5, "stagnation": {"enabled": False}}
    )
    runner = AgentRunner(
        spawn_child=run_child,
        pm=_pm(),
        settings=settings,
        workspace=workspace,
        home=home,
        session_id=f"b-{setup}",
    )
    return timed_run(runner, "go")[0]


def direct_miss_us(root: Path, calls: int) -> tuple[float, float]:
    """µs per call of permission_verdict + tool_result_verdict: (with miss hooks, without)."""
    from mycode_core.records import RunContext

    figures = []
    for with_compat in (True, False):
        home = root / f"direct-{with_compat}"
        home.mkdir(parents=True, exist_ok=True)
        (home / "hooks.json").write_text(json.dumps(SETUPS["miss"]))
        pm = _pm(with_compat)
        context = RunContext(
            workspace=root / "ws", home=home, settings=Settings(), session_id=f"d-{with_compat}"
        )
        tool = Tool(name="noop", description="x", handler=lambda a, c: "ok")
        result = ToolResult(content="ok")
        best = float("inf")
        for _round in range(5):
            started = time.perf_counter()
            for i in range(calls):
                call = ToolCall(id=f"c{i}", name="noop", arguments={"i": i})
                pm.hook.permission_verdict(call=call, tool=tool, context=context)
                pm.hook.tool_result_verdict(call=call, tool=tool, result=result, context=context)
            best = min(best, (time.perf_counter() - started) / calls * 1e6)
        figures.append(best)
    return figures[0], figures[1]


def main() -> None:
    """Run the benchmark and print the figures."""
    args = bench_options(__doc__, steps=200, repeat=5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in SETUPS:  # warm-up
            run_once(root, name, 10)
        times = interleaved(
            {name: name for name in SETUPS},
            args.repeat,
            lambda name: run_once(root, name, args.steps),
            warm_up=False,
        )
        per_step = {name: t / args.steps * 1000 for name, t in medians(times).items()}
        with_miss, without = direct_miss_us(root, 2000)
    print(f"steps per run: {args.steps}, runs: {args.repeat} (median)")
    for name, ms in per_step.items():
        print(f"  {name:5s} {ms:8.3f} ms/step")
    noop = per_step["noop"] - per_step["none"]
    miss = per_step["miss"] - per_step["none"]
    print(f"no-op command hook (PreToolUse+PostToolUse): +{noop:.2f} ms/call")
    print(f"matcher miss, whole loop:                    {miss:+.3f} ms/call")
    miss_ms = (with_miss - without) / 1000
    print(
        f"matcher miss, hooks alone: {with_miss:.1f} µs vs {without:.1f} µs without the plugin "
        f"= {miss_ms:.3f} ms/call (goal ≤ {GOAL_MS} ms): {'OK' if miss_ms <= GOAL_MS else 'OVER'}"
    )


if __name__ == "__main__":
    main()
