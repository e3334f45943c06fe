"""Benchmark: peak memory of ``read_file`` showing a 100-line window of a 200 MB file.

A 200 MB text file is generated in a temp folder; a fresh Python process imports the tool,
reads a 100-line window from the middle (and one near the end) and reports its peak RSS
(``ru_maxrss``). A second process only imports the same modules, as the baseline, so the
difference is what the read itself cost.

Run: ``uv run python bench/bench_read_window.py [--size-mb N] [--json]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from common import bench_options, timed_call

CHILD = """
import json, resource, sys, time
from pathlib import Path
from mycode_core.config import Settings
from mycode_core.records import RunContext
from mycode_builtin_tools.tools.read_file import read_file
ws, offset, do_read = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
context = RunContext(workspace=ws, home=ws.parent / "home", settings=Settings(), session_id="b")
elapsed, shown = 0.0, 0
if do_read:
    started = time.perf_counter()
    result = read_file.handler({"path": "big.log", "offset": offset, "limit": 100}, context)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.text()[:300]
    shown = result.text().count("\\n")
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rss_mb": round(rss_kb / 1024, 1), "seconds": round(elapsed, 3), "lines": shown}))
"""


def _generate(path: Path, size_mb: int) -> int:
    line = b"2024-01-01T00:00:00 INFO worker-07 processed request id=0123456789abcdef ok\n"
    block = line * 10_000
    lines = 0
    with path.open("wb") as fh:
        while fh.tell() < size_mb * 1024 * 1024:
            fh.write(block)
            lines += 10_000
    return lines


def _child(ws: Path, offset: int, read: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(ws), str(offset), "1" if read else "0"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> None:
    """Generate the file, measure, print the figures."""
    args = bench_options(__doc__, size_mb=200, json=False)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (Path(tmp) / "home").mkdir()
        generated, lines = timed_call(lambda: _generate(ws / "big.log", args.size_mb))
        size = (ws / "big.log").stat().st_size
        baseline = _child(ws, 1, read=False)
        middle = _child(ws, lines // 2, read=True)
        end = _child(ws, lines - 150, read=True)
    report = {
        "file_mb": round(size / 1024 / 1024, 1),
        "file_lines": lines,
        "generate_s": round(generated, 2),
        "baseline_rss_mb": baseline["rss_mb"],
        "middle_window": middle,
        "end_window": end,
        "read_cost_mb": round(max(middle["rss_mb"], end["rss_mb"]) - baseline["rss_mb"], 1),
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"file: {report['file_mb']} MB, {lines} lines (generated in {generated:.1f}s)")
    print(f"baseline process (imports only): peak RSS {baseline['rss_mb']} MB")
    print(f"100-line window at line {lines // 2}: peak RSS {middle['rss_mb']} MB, "
          f"{middle['seconds']}s")  # fmt: skip
    print(f"100-line window at line {lines - 150}: peak RSS {end['rss_mb']} MB, {end['seconds']}s")
    print(f"the read itself added {report['read_cost_mb']} MB of peak memory")


if __name__ == "__main__":
    main()
