"""Workspace-change detection around one command in a 50,000-file git repository.

Builds (once, under /tmp) a git repository of 50,000 files in 500 folders, then times
``mark()`` + a change to the 50,000th file + ``changes()`` with each mechanism: inotify (the
default on Linux; the one-time set-up of the watches is reported separately), and the
fallback snapshots (``git status`` and a plain walk). Goal: <= 50 ms around one command, and
the change to the 50,000th file is seen. Then a real inotify queue overflow (more new files in
one call than ``fs.inotify.max_queued_events``): the time of that call (one rescan + the
watches set up again), whether it reported every change, and the per-command time right after
(goal: <= 2 ms again from the next call on).

    uv run python bench/bench_changes.py [--files 50000] [--repeat 20]
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from common import bench_options, median_ms, timed_call

from mycode_core.runtime.changes import ChangeDetector

GOAL_MS = 50.0


def build(root: Path, files: int) -> Path:
    marker = root / f".built-{files}"
    if marker.exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        folder = root / f"pkg{index // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{index}.py").write_text(f"x = {index}\n")
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=b"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], cwd=root, check=True)
    marker.write_text("")
    return root


def measure(detector: ChangeDetector, last: Path, repeat: int) -> tuple[float, bool]:
    times, seen = [], True
    rel = str(last.relative_to(detector.root))
    for index in range(repeat):

        def step(index: int = index) -> Any:
            detector.mark()
            last.write_text(f"x = {index}  # changed\n")
            return detector.changes()

        took, found = timed_call(step)
        times.append(took)
        seen = seen and rel in found
    return median_ms(times), seen


def main() -> None:
    args = bench_options(None, files=50_000, repeat=20)
    root = build(Path(f"/tmp/mycode-bench-changes-{args.files}"), args.files)
    last = root / f"pkg{(args.files - 1) // 100}" / f"m{args.files - 1}.py"
    started = time.perf_counter()
    detector = ChangeDetector(root)
    detector.mark()
    setup = (time.perf_counter() - started) * 1000
    ms, seen = measure(detector, last, args.repeat)
    print(
        f"{detector.mechanism:9} set-up once {setup:8.1f} ms | per command {ms:7.2f} ms | "
        f"50,000th file seen: {seen}  (goal <= {GOAL_MS:.0f} ms)"
    )
    flood = root / "flood"
    flood.mkdir(exist_ok=True)
    detector.mark()
    count = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text()) // 2 + 500
    started = time.perf_counter()
    for index in range(count):
        (flood / f"f{index}").write_bytes(b"")
    last.write_text("x = 'flooded call'\n")
    writing = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    found = detector.changes()
    flooded = (time.perf_counter() - started) * 1000
    complete = (
        str(last.relative_to(root)) in found and sum(p.startswith("flood/") for p in found) == count
    )
    ms, seen = measure(detector, last, args.repeat)
    print(
        f"overflow  {count} new files (written in {writing:.0f} ms): changes() {flooded:8.1f} ms "
        f"(rearms={detector.rearms}, "
        f"all reported: {complete}) | next commands {ms:7.2f} ms via {detector.mechanism} "
        f"| seen: {seen}  (goal <= 2 ms)"
    )
    detector.close()
    subprocess.run(["rm", "-rf", str(flood)], check=True)
    for label in ("git", "walk"):
        detector = ChangeDetector(root, use_inotify=False)
        if label == "walk":
            detector._git = False  # what a non-git workspace gets
        ms, seen = measure(detector, last, max(3, args.repeat // 5))
        print(f"{label:9} snapshot fallback   | per command {ms:7.2f} ms | seen: {seen}")
        detector.close()
    subprocess.run(["git", "checkout", "-q", "."], cwd=root, check=True)


if __name__ == "__main__":
    main()
