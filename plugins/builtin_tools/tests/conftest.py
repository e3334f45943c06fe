"""Fixtures for the built-in tools tests: a real workspace and home in tmp dirs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mycode_builtin_tools.tools import build_tools

from mycode_core.config import Settings
from mycode_core.records import RunContext, ToolResult
from mycode_core.testing.host import host_processes, wait_until


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A MYCODE_HOME outside the workspace."""
    path = tmp_path / "home"
    path.mkdir()
    return path.resolve()


def make_context(workspace: Path, home: Path, **settings: Any) -> RunContext:
    """A RunContext over ``workspace`` with ``Settings(**settings)``."""
    return RunContext(workspace=workspace, home=home, settings=Settings(**settings), session_id="t")


@pytest.fixture
def new_context(workspace: Path, home: Path) -> Callable[..., RunContext]:
    """Factory: ``new_context(permission_mode="plan")`` builds a fresh RunContext."""
    return lambda **settings: make_context(workspace, home, **settings)


@pytest.fixture
def context(workspace: Path, home: Path) -> RunContext:
    """A RunContext with default settings."""
    return make_context(workspace, home)


@pytest.fixture
def run(context: RunContext) -> Callable[..., ToolResult]:
    """Call a built-in tool handler by name: ``run("read_file", path="a.txt")``."""
    tools = {tool.name: tool for tool in build_tools()}

    def call(name: str, **arguments: Any) -> ToolResult:
        result = tools[name].handler(arguments, context)
        assert isinstance(result, ToolResult)
        return result

    return call


def _wait_gone(needle: str, seconds: float = 10.0) -> bool:
    """True once no host process has ``needle`` in its command line."""
    return wait_until(lambda: not host_processes(needle), seconds)


@pytest.fixture
def wait_gone() -> Callable[[str], bool]:
    """``wait_gone("sleep 301")``: True once no host process has that in its command line."""
    return _wait_gone
