"""Fixtures: a workspace with 40-line files, a home, and helpers for long fake-server runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import FAST_RETRY_CONFIG, CliResult, FakeOpenAIServer, run_cli, turn

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:  # this folder's view_helpers (pytest uses --import-mode=importlib)
    sys.path.insert(0, _HERE)

SUMMARY = (
    "## Goal\nAnswer the question about the files.\n## Progress\nRead several files.\n"
    "## Next steps\nKeep reading."
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    for i in range(10):
        lines = [
            f"line {n} of file {i}: value = {n * i} # some filler text here" for n in range(40)
        ]
        (root / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.toml").write_text(FAST_RETRY_CONFIG, encoding="utf-8")
    return path


def summariser(text: str = SUMMARY) -> Callable[[dict[str, Any]], Any]:
    """A ``side_responder`` answering tool-less requests (the summary) with ``text``."""
    return lambda body: None if body.get("tools") else turn(text)


def read_turns(count: int) -> list[Any]:
    """``count`` turns each reading one of the 40-line files."""
    return [
        turn(None, [{"id": f"r{i}", "name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}])
        for i in range(count)
    ]


def run(
    server: FakeOpenAIServer, workspace: Path, home: Path, prompt: str, *extra: str
) -> CliResult:
    """``mycode -p PROMPT`` against ``server`` with the built-in tools and this plugin."""
    args = server.cli_args(prompt, output_format="stream-json")
    args += ["--permission-mode", "bypass", "--max-steps", "400"]
    return run_cli(
        [*args, *extra],
        cwd=workspace,
        home=home,
        env={"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"},
        timeout=240,
    )


def main_requests(server: FakeOpenAIServer) -> list[Any]:
    """The agent's own requests (with tools), without summary side requests."""
    return [r for r in server.chat_requests if r.body.get("tools")]


def is_prefix(earlier: list[Any], later: list[Any]) -> bool:
    """Whether ``earlier`` messages are exactly the start of ``later``."""
    return len(earlier) <= len(later) and json.dumps(later[: len(earlier)]) == json.dumps(earlier)


class Helpers:
    """The helpers above, as a fixture (test modules cannot import conftest)."""

    summariser = staticmethod(summariser)
    read_turns = staticmethod(read_turns)
    run = staticmethod(run)
    main_requests = staticmethod(main_requests)
    is_prefix = staticmethod(is_prefix)


@pytest.fixture
def h() -> type[Helpers]:
    return Helpers
