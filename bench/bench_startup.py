"""Start-up cost of ``mycode --help`` and ``mycode --version`` beside ``import click``.

Runs each command ``--runs`` times (default 20), interleaved so background noise hits all of
them alike, and prints the median wall time of each and the ratio to ``python -c "import
click"`` measured in the same run. Goal: ``--help`` at most 2.5x the click import.

    uv run python bench/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 2.5


def mycode_script() -> str:
    """The ``mycode`` console script of this interpreter's environment."""
    candidate = Path(sys.executable).with_name("mycode")
    if not candidate.exists():
        raise SystemExit(f"no mycode script next to {sys.executable}; run `uv sync` first")
    return str(candidate)


def time_once(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run (output discarded); a failing command aborts the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="mycode-bench-home-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYCODE_", "OPENAI_"))}
    env["MYCODE_HOME"] = home
    script = mycode_script()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "mycode --help": [script, "--help"],
        "mycode --version": [script, "--version"],
    }
    for command in commands.values():  # warm the OS cache and mycode's command cache
        time_once(command, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            samples[name].append(time_once(command, env))

    medians = {name: statistics.median(values) for name, values in samples.items()}
    click_time = medians["python -c 'import click'"]
    print(f"median wall of {args.runs} runs each (python {sys.version.split()[0]}):")
    for name, value in medians.items():
        print(f"  {name:<28} {value * 1000:7.1f} ms   {value / click_time:5.2f}x click import")
    help_ratio = medians["mycode --help"] / click_time
    verdict = "meets" if help_ratio <= GOAL else "MISSES"
    print(f"--help / import click = {help_ratio:.2f} ({verdict} the goal of <= {GOAL}x)")


if __name__ == "__main__":
    main()
