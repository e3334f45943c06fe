"""What every benchmark shares: launching mycode, temp homes, timing, in-process runs.

The scripts are run as ``python bench/bench_x.py``, so this module is imported as ``common``
(the script's folder is first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from mycode_core import hookimpl
from mycode_core.records import Tool

T = TypeVar("T")


def mycode_script() -> str:
    """The ``mycode`` console script of this interpreter's environment."""
    candidate = Path(sys.executable).with_name("mycode")
    if not candidate.exists():
        raise SystemExit(f"no mycode script next to {sys.executable}; run `uv sync` first")
    return str(candidate)


def bench_dir(name: str) -> Path:
    """A fresh temp folder ``mycode-bench-NAME-*`` (left behind for inspection)."""
    return Path(tempfile.mkdtemp(prefix=f"mycode-bench-{name}-"))


def clean_env(home: Path | str, **extra: str) -> dict[str, str]:
    """This process's environment without ``MYCODE_*``/``OPENAI_*``, with ``MYCODE_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYCODE_", "OPENAI_"))}
    env["MYCODE_HOME"] = str(home)
    env.update(extra)
    return env


def time_once(
    command: list[str], env: Mapping[str, str], before: Callable[[], object] | None = None
) -> float:
    """Wall seconds of one run (output discarded); a failing command aborts the benchmark.

    ``before`` runs first, outside the timed part.
    """
    if before is not None:
        before()
    started = time.perf_counter()
    done = subprocess.run(
        command, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def interleaved(
    variants: Mapping[str, T],
    runs: int,
    measure: Callable[[T], float],
    *,
    warm_up: bool = True,
    collect: bool = False,
) -> dict[str, list[float]]:
    """``runs`` samples of ``measure(variant)`` per variant, the variants taken in turn.

    Interleaving makes background noise hit every variant alike. ``warm_up`` measures each
    variant once first (discarded); ``collect`` runs the garbage collector before each sample.
    """
    if warm_up:
        for variant in variants.values():
            measure(variant)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, variant in variants.items():
            if collect:
                gc.collect()
            samples[name].append(measure(variant))
    return samples


def medians(samples: Mapping[T, Iterable[float]]) -> dict[T, float]:
    """The median of each list of samples."""
    return {name: statistics.median(values) for name, values in samples.items()}


def median_ms(values: Iterable[float]) -> float:
    """The median of seconds, in milliseconds."""
    return statistics.median(values) * 1000


class NoopTools:
    """A plugin with one tool ``noop`` that does nothing (distinct results, so no stagnation)."""

    def __init__(self, concurrency_safe: bool = False) -> None:
        self.concurrency_safe = concurrency_safe

    @hookimpl
    def register_tools(self, register: Any, context: Any) -> None:
        """Register the ``noop`` tool."""
        register(
            Tool(
                name="noop",
                description="Does nothing.",
                handler=lambda arguments, _context: f"ok {arguments.get('i')}",
                input_schema={"type": "object", "properties": {"i": {"type": "integer"}}},
                concurrency_safe=self.concurrency_safe,
                read_only=True,
            )
        )


def noop_turn(i: int, call_id: str | None = None) -> dict[str, Any]:
    """A scripted model turn that calls ``noop`` with ``i`` (id ``c<i>`` unless given)."""
    return {"tool_calls": [{"id": call_id or f"c{i}", "name": "noop", "arguments": {"i": i}}]}


def write_turns(path: Path, turns: list[Any]) -> str:
    """Write a scripted-provider script; returns the model name ``scripted:PATH``."""
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def timed_run(runner: Any, prompt: str) -> tuple[float, list[Any]]:
    """Prepare ``runner`` (an ``AgentRunner``), time its run of ``prompt``, close it.

    Returns the seconds of the run and its events.
    """
    runner.prepare()
    started = time.perf_counter()
    events = list(runner.run(prompt))
    elapsed = time.perf_counter() - started
    runner.close()
    return elapsed, events


def timed_call(function: Callable[[], T]) -> tuple[float, T]:
    """Call ``function``; returns its wall seconds and its result."""
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def median_seconds(function: Callable[[], object], repeat: int) -> float:
    """The median wall seconds of ``repeat`` calls of ``function``."""
    return statistics.median(timed_call(function)[0] for _ in range(repeat))


def bench_options(doc: str | None, **options: Any) -> argparse.Namespace:
    """A benchmark's command line, parsed: ``--NAME`` for each option, given as its default or
    as ``(default, help)``; a ``False`` default makes a flag. The description is ``doc``'s
    first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    for name, spec in options.items():
        default, text = spec if isinstance(spec, tuple) else (spec, None)
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            parser.add_argument(flag, action="store_true", help=text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=text)
    return parser.parse_args()
