"""Benchmarks of the MCP bridge.

1. Start-up: three servers started concurrently by the bridge, against the slowest of them
   started alone (goal: ratio <= 1.3).
2. Per-call overhead: a tool call through the bridge (synchronous handler -> background loop ->
   session -> ToolResult) against ``ClientSession.call_tool`` awaited directly.

Run: ``uv run python bench/bench_mcp.py [--rounds N] [--calls N] [--json]``.
Servers: ``mcp-server-time``, ``mcp-server-git`` (PyPI, dev dependencies) and the test feature
server; ``server-everything`` replaces the feature server when ``MYCODE_TEST_EVERYTHING_DIR``
points at an install (see ``plugins/mcp_bridge/tests/install_test_servers.sh``).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from common import bench_options, timed_call

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FEATURE_SERVER = ROOT / "plugins" / "mcp_bridge" / "tests" / "servers" / "feature_server.py"


def servers(repo: Path) -> dict[str, dict[str, Any]]:
    """The three servers benchmarked."""
    chosen: dict[str, dict[str, Any]] = {
        "time": {"command": str(BIN / "mcp-server-time")},
        "git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(repo)]},
    }
    everything = Path(os.environ.get("MYCODE_TEST_EVERYTHING_DIR", "/nonexistent"))
    entry = everything / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    if entry.is_file():
        chosen["everything"] = {"command": "node", "args": [str(entry), "stdio"]}
    else:
        chosen["feature"] = {"command": sys.executable, "args": [str(FEATURE_SERVER)]}
    return chosen


def _run(workspace: Path, home: Path, config: dict[str, Any]) -> Any:
    from mycode_core.config import Settings
    from mycode_core.records import RunContext

    settings = Settings(mcp_config_files=[json.dumps({"mcpServers": config})])
    return RunContext(workspace=workspace, home=home, settings=settings, session_id="bench")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_startup(workspace: Path, home: Path, config: dict[str, Any]) -> tuple[float, float]:
    """(seconds until every server's tools are registered, CPU seconds the servers used)."""
    import mycode_mcp_bridge

    context = _run(workspace, home, config)
    cpu_before = _children_cpu()
    started = time.perf_counter()
    mycode_mcp_bridge.register_tools(register=lambda tool: None, context=context)
    for task in context.startup_tasks:
        task()
    elapsed = time.perf_counter() - started
    ready = {name.split("__")[1] for name in context.tools.names() if name.startswith("mcp__")}
    for task in context.cleanup:
        task()
    missing = set(config) - ready
    if missing:
        raise SystemExit(f"servers did not start: {sorted(missing)}")
    return elapsed, _children_cpu() - cpu_before


def delayed(config: dict[str, Any], delays: list[float]) -> dict[str, Any]:
    """The same servers behind a ``sleep`` (a start-up that waits rather than computes)."""
    out = {}
    for (name, entry), delay in zip(config.items(), delays, strict=True):
        script = f'sleep {delay}; exec "$0" "$@"'
        out[name] = {
            "command": "sh",
            "args": ["-c", script, entry["command"], *entry.get("args", [])],
        }
    return out


def _compare(workspace: Path, home: Path, config: dict[str, Any], rounds: int) -> dict[str, Any]:
    alone: dict[str, float] = {}
    cpu = 0.0
    for name, entry in config.items():
        runs = [time_startup(workspace, home, {name: entry}) for _ in range(rounds)]
        alone[name] = statistics.median(r[0] for r in runs)
        cpu += statistics.median(r[1] for r in runs)
    together = statistics.median(time_startup(workspace, home, config)[0] for _ in range(rounds))
    slowest = max(alone.values())
    cores = os.cpu_count() or 1
    floor = max(slowest, cpu / cores)
    return {
        "alone_s": {k: round(v, 3) for k, v in alone.items()},
        "slowest_alone_s": round(slowest, 3),
        "all_three_s": round(together, 3),
        "ratio": round(together / slowest, 3),
        "servers_cpu_s": round(cpu, 3),
        "cpu_floor_s": round(floor, 3),
        "ratio_to_cpu_floor": round(together / floor, 3),
    }


def bench_startup(workspace: Path, home: Path, rounds: int) -> dict[str, Any]:
    """Start-up of each server alone and of all three together, as they are and delayed."""
    config = servers(workspace)
    time_startup(workspace, home, config)  # warm the OS caches and the background loop
    return {
        "cores": os.cpu_count(),
        "goal": "ratio <= 1.3",
        "real": _compare(workspace, home, config, rounds),
        "delayed": _compare(workspace, home, delayed(config, [0.5, 1.0, 1.5]), rounds),
    }


def bench_calls(workspace: Path, home: Path, calls: int) -> dict[str, Any]:
    """Mean and median latency of an echo call: bridge handler vs direct ClientSession."""
    import mycode_mcp_bridge

    entry = {"command": sys.executable, "args": [str(FEATURE_SERVER)]}
    context = _run(workspace, home, {"feat": entry})
    mycode_mcp_bridge.register_tools(register=lambda tool: None, context=context)
    for task in context.startup_tasks:
        task()
    tool = context.tools.get("mcp__feat__echo")
    assert tool is not None
    for _ in range(20):
        tool.handler({"text": "warm"}, context)
    bridge_times = []
    for i in range(calls):
        took, result = timed_call(partial(tool.handler, {"text": f"hello {i}"}, context))
        bridge_times.append(took)
        assert result.content == f"hello {i}"
    for task in context.cleanup:
        task()

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    direct_times: list[float] = []

    async def direct() -> None:
        params = StdioServerParameters(command=str(entry["command"]), args=list(entry["args"]))
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.list_tools()
                    for _ in range(20):
                        await session.call_tool("echo", {"text": "warm"})
                    for i in range(calls):
                        started = time.perf_counter()
                        result = await session.call_tool("echo", {"text": f"hello {i}"})
                        direct_times.append(time.perf_counter() - started)
                        assert result.content[0].text == f"hello {i}"  # type: ignore[union-attr]

    anyio.run(direct)

    def ms(values: list[float]) -> dict[str, float]:
        return {
            "mean_ms": round(1000 * statistics.fmean(values), 3),
            "median_ms": round(1000 * statistics.median(values), 3),
        }

    bridge, sdk = ms(bridge_times), ms(direct_times)
    return {
        "calls": calls,
        "bridge": bridge,
        "direct_sdk": sdk,
        "overhead_median_ms": round(bridge["median_ms"] - sdk["median_ms"], 3),
        "overhead_mean_ms": round(bridge["mean_ms"] - sdk["mean_ms"], 3),
    }


def main() -> None:
    """Run both benchmarks and print the figures."""
    args = bench_options(
        __doc__,
        rounds=(5, "start-ups per measurement"),
        calls=(300, "calls per side"),
        json=(False, "print JSON only"),
    )
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        workspace.mkdir()
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        report = {
            "startup": bench_startup(workspace, home, args.rounds),
            "per_call": bench_calls(workspace, home, args.calls),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    start, call = report["startup"], report["per_call"]
    print(f"MCP start-up, median of {args.rounds} rounds, {start['cores']} CPU core(s)")
    for label, figures in (
        ("as they are", start["real"]),
        ("behind sleep 0.5/1/1.5 s", start["delayed"]),
    ):
        print(f"  servers {label}:")
        for name, seconds in figures["alone_s"].items():
            print(f"    {name:<12} alone          {seconds:.3f} s")
        print(f"    all three concurrently     {figures['all_three_s']:.3f} s")
        print(f"    ratio to slowest alone     {figures['ratio']:.2f}x  (goal <= 1.3x)")
        print(
            f"    servers' own CPU {figures['servers_cpu_s']:.2f} s -> floor "
            f"{figures['cpu_floor_s']:.3f} s; ratio to floor {figures['ratio_to_cpu_floor']:.2f}x"
        )
    print(f"Per-call latency, echo tool, {call['calls']} calls")
    rows = (
        ("bridge", call["bridge"]["median_ms"], call["bridge"]["mean_ms"]),
        ("direct SDK", call["direct_sdk"]["median_ms"], call["direct_sdk"]["mean_ms"]),
        ("overhead", call["overhead_median_ms"], call["overhead_mean_ms"]),
    )
    for label, median, mean in rows:
        print(f"  {label:<11} median {median:.3f} ms  mean {mean:.3f} ms")


if __name__ == "__main__":
    main()
