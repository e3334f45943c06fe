"""pytest fixtures for plugin authors, loaded automatically (entry point ``pytest11``).

* ``mycode_workspace`` — an empty workspace folder (a ``Path``) of a fresh temp layout;
* ``mycode_context`` — a :class:`~mycode_core.records.RunContext` on that workspace, with a
  private ``MYCODE_HOME``;
* ``mycode_run`` — ``mycode_run(turns, *plugins, prompt="...", **settings)`` runs a scripted
  task in-process through the real loop with your plugins and returns its events (the last is
  ``result``); with ``turns=None`` pass ``model="prefix:id"`` for a model of your own.
  A ``prompt="/name args"`` runs a plugin's slash command first, as the CLI does (its output
  is a ``notice`` event with ``source="/name"``; the prompt it returns, if any, then runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def mycode_workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    workspace = (tmp_path / "workspace").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    return workspace


@pytest.fixture
def mycode_context(tmp_path: Path, mycode_workspace: Path) -> Any:
    """A run context on ``mycode_workspace`` with its own home folder."""
    from mycode_core.testing.inprocess import make_context

    return make_context(tmp_path)


@pytest.fixture
def mycode_run(tmp_path: Path, mycode_workspace: Path) -> Callable[..., list[Any]]:
    """Run scripted model turns through the real loop with the given plugins."""
    from mycode_core.testing.inprocess import make_runner, run_prompt

    def run(
        turns: Sequence[Mapping[str, Any]] | None,
        *plugins: object,
        prompt: str = "do the task",
        **settings: Any,
    ) -> list[Any]:
        runner = make_runner(tmp_path, *plugins, turns=turns, **settings)
        return run_prompt(runner, prompt)

    return run
