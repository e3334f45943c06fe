"""``mycode --help`` with 20 extra installed plugins, cold and warm command cache, beside
``python -c "import click"``.

Writes 20 tiny plugin distributions (a module plus a ``.dist-info`` whose ``entry_points.txt``
registers it in group ``mycode``) into a temporary folder put on ``PYTHONPATH``, so they are
installed plugins as far as ``importlib.metadata`` is concerned; each adds one subcommand and
one tool. The repository's own installed plugins load too. Every command runs ``--runs`` times
(default 20), interleaved so background noise hits all alike; the median wall time is printed.

* cold: the plugin-command cache is deleted before each run, so ``--help`` imports every
  plugin and calls ``register_commands`` (and rewrites the cache);
* warm: the cache is valid, so ``--help`` imports no plugin.

Goal: warm ``--help`` at most 1.5x the click import (same interpreter, same ``PYTHONPATH``).

    uv run python bench/bench_help_plugins.py [--runs 20] [--plugins 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mycode_core.testing import write_plugin_dist

GOAL = 1.5

PLUGIN = '''
"""Benchmark plugin {index}: one command, one tool."""
from mycode_core import hookimpl


@hookimpl
def register_commands(cli):
    import click

    @cli.command(name="bench-{index}")
    def command():
        """Benchmark command {index}."""
        click.echo("{index}")


@hookimpl
def register_tools(register, context):
    from mycode_core import tool

    @tool(read_only=True)
    def bench_tool_{index}(text: str) -> str:
        """Echo text."""
        return text

    register(bench_tool_{index})
'''


def mycode_script() -> str:
    """The ``mycode`` console script of this interpreter's environment."""
    candidate = Path(sys.executable).with_name("mycode")
    if not candidate.exists():
        raise SystemExit(f"no mycode script next to {sys.executable}; run `uv sync` first")
    return str(candidate)


def time_once(command: list[str], env: dict[str, str], before: object = None) -> float:
    """Wall seconds of one run (output discarded); a failing command aborts the benchmark."""
    if callable(before):
        before()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--plugins", type=int, default=20)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="mycode-bench-help-"))
    try:
        site = tmp / "site"
        for index in range(args.plugins):
            write_plugin_dist(site, f"bench{index}", PLUGIN.format(index=index))
        home = tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MYCODE_", "OPENAI_"))}
        env["MYCODE_HOME"] = str(home)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        cache = home / "cache" / "plugin_commands.json"
        script = mycode_script()

        listed = subprocess.run(
            [script, "--help"], env=env, capture_output=True, text=True, check=True
        ).stdout
        missing = [i for i in range(args.plugins) if f"bench-{i}" not in listed]
        if missing:
            raise SystemExit(f"--help does not list the commands of plugins {missing}")

        def drop_cache() -> None:
            cache.unlink(missing_ok=True)

        cases: dict[str, tuple[list[str], object]] = {
            "python -c 'import click'": ([sys.executable, "-c", "import click"], None),
            "mycode --help (warm cache)": ([script, "--help"], None),
            "mycode --help (cold cache)": ([script, "--help"], drop_cache),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for command, before in cases.values():  # warm the OS cache (and refill the cache)
            time_once(command, env, before)
        for _ in range(args.runs):
            for name in ("python -c 'import click'", "mycode --help (cold cache)"):
                command, before = cases[name]
                times[name].append(time_once(command, env, before))
            command, before = cases["mycode --help (warm cache)"]  # after cold: cache refilled
            times["mycode --help (warm cache)"].append(time_once(command, env, before))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    click_ms = statistics.median(times["python -c 'import click'"]) * 1000
    print(f"{args.plugins} extra plugins on PYTHONPATH, {args.runs} runs each, median wall time")
    for name, samples in times.items():
        ms = statistics.median(samples) * 1000
        print(f"  {name:<28} {ms:7.1f} ms  ({ms / click_ms:4.2f}x click)")
    warm = statistics.median(times["mycode --help (warm cache)"]) * 1000 / click_ms
    verdict = "ok" if warm <= GOAL else "MISSED"
    print(f"goal: warm --help <= {GOAL}x click: {warm:.2f}x {verdict}")


if __name__ == "__main__":
    main()
