"""Imported once by the warm fork server (:mod:`mycode_batch.warm`): what every task needs.

Each import is what a ``mycode -p`` run would do anyway; a failure here only makes the start
colder (the task imports it itself, and reports any error the usual way).
"""

from __future__ import annotations

import importlib

MODULES = (
    "mycode_batch.warm",  # the forked child's entry point
    "mycode_core.cli.main",
    "mycode_core.cli.run",
    "mycode_core.runtime.loop",
    "openai",
    "mycode_core.providers.openai_compat",
)


def _warm_up() -> None:
    from importlib import metadata

    from mycode_core.plugins import ENTRY_POINT_GROUP
    from mycode_core.runtime.tokens import count_text

    count_text("warm up the offline tokenizer")
    names = [*MODULES, *(ep.module for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001,S112 - the run imports it again and says what is wrong
            continue


try:
    _warm_up()
except Exception:  # noqa: BLE001,S110 - a cold start is still a start
    pass
