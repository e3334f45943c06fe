"""Start-up cost of ``mycode --help`` and ``mycode --version`` beside ``import click``.

Runs each command ``--runs`` times (default 20), interleaved so background noise hits all of
them alike, and prints the median wall time of each and the ratio to ``python -c "import
click"`` measured in the same run. Goal: ``--help`` at most 1.5x the click import (issue 24).

    uv run python bench/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import sys

from common import bench_dir, clean_env, interleaved, medians, mycode_script, time_once

GOAL = 1.5


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    env = clean_env(bench_dir("home"))
    script = mycode_script()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "mycode --help": [script, "--help"],
        "mycode --version": [script, "--version"],
    }
    # the warm-up fills the OS cache and mycode's command cache
    samples = interleaved(commands, args.runs, lambda command: time_once(command, env))
    figures = medians(samples)
    click_time = figures["python -c 'import click'"]
    print(f"median wall of {args.runs} runs each (python {sys.version.split()[0]}):")
    for name, value in figures.items():
        print(f"  {name:<28} {value * 1000:7.1f} ms   {value / click_time:5.2f}x click import")
    help_ratio = figures["mycode --help"] / click_time
    verdict = "meets" if help_ratio <= GOAL else "MISSES"
    print(f"--help / import click = {help_ratio:.2f} ({verdict} the goal of <= {GOAL}x)")


if __name__ == "__main__":
    main()
