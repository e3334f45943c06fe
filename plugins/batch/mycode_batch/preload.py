"""Imported once by the warm fork server (:mod:`mycode_batch.warm`): what every task needs.

Each import is what a ``mycode -p`` run would do anyway; a failure here only makes the start
colder (the task imports it itself, and reports any error the usual way). Of the plugins, only
mycode's own distributions that the environment allows are imported here: a third-party
plugin is imported by each task, so whatever it does at import time happens in the task, as in
a cold start.
"""

from __future__ import annotations

import importlib
import re

MODULES = (
    "mycode_batch.warm",  # the forked child's entry point
    "mycode_core.cli.main",
    "mycode_core.cli.run",
    "mycode_core.runtime.loop",
    "http.client",
    "mycode_core.providers.openai_compat",
    "mycode_core.providers.stdhttp",
)

OWN_DISTRIBUTIONS = frozenset(
    {
        "mycode-batch",
        "mycode-builtin-tools",
        "mycode-checkpoints",
        "mycode-claude-compat",
        "mycode-completion-gate",
        "mycode-context-engine",
        "mycode-mcp-bridge",
        "mycode-memory",
        "mycode-skills",
        "mycode-stagnation",
        "mycode-subagents",
    }
)
"""The plugins of this project, whose import has no side effects."""


def _warm_up() -> None:
    from mycode_core.api import allowed_entry_points
    from mycode_core.tokens import count_text

    count_text("warm up the offline tokenizer")
    ours = [
        ep.module
        for ep in allowed_entry_points()
        if ep.dist is not None
        and re.sub(r"[-_.]+", "-", str(ep.dist.name)).lower() in OWN_DISTRIBUTIONS
    ]
    names = [*MODULES, *ours]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001,S112 - the run imports it again and says what is wrong
            continue


try:
    _warm_up()
except Exception:  # noqa: BLE001,S110 - a cold start is still a start
    pass
