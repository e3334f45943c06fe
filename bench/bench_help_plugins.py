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

import os
import shutil
import subprocess
import sys
from collections.abc import Callable

from common import (
    bench_dir,
    bench_options,
    clean_env,
    interleaved,
    median_ms,
    mycode_script,
    time_once,
)

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


def main() -> None:
    """Measure and print the figures."""
    args = bench_options(__doc__, runs=20, plugins=20)

    tmp = bench_dir("help")
    try:
        site = tmp / "site"
        for index in range(args.plugins):
            write_plugin_dist(site, f"bench{index}", PLUGIN.format(index=index))
        home = tmp / "home"
        home.mkdir()
        env = clean_env(home)
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

        # in this order: warm right after cold, which refilled the cache
        cases: dict[str, tuple[list[str], Callable[[], None] | None]] = {
            "python -c 'import click'": ([sys.executable, "-c", "import click"], None),
            "mycode --help (cold cache)": ([script, "--help"], drop_cache),
            "mycode --help (warm cache)": ([script, "--help"], None),
        }
        # the warm-up fills the OS cache (and refills the command cache)
        samples = interleaved(cases, args.runs, lambda case: time_once(case[0], env, case[1]))
        order = ("python -c 'import click'", "mycode --help (warm cache)")
        times = {name: samples[name] for name in (*order, "mycode --help (cold cache)")}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    click_ms = median_ms(times["python -c 'import click'"])
    print(f"{args.plugins} extra plugins on PYTHONPATH, {args.runs} runs each, median wall time")
    for name, values in times.items():
        ms = median_ms(values)
        print(f"  {name:<28} {ms:7.1f} ms  ({ms / click_ms:4.2f}x click)")
    warm = median_ms(times["mycode --help (warm cache)"]) / click_ms
    verdict = "ok" if warm <= GOAL else "MISSED"
    print(f"goal: warm --help <= {GOAL}x click: {warm:.2f}x {verdict}")


if __name__ == "__main__":
    main()
