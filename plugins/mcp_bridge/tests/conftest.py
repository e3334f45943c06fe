"""Fixtures for the MCP bridge tests; makes ``mcp_helpers`` importable (importlib mode)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from mcp_helpers import Run  # noqa: E402


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private MYCODE_HOME (also exported, for the CLI)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MYCODE_HOME", str(path))
    return path


@pytest.fixture
def runs(workspace: Path, home: Path) -> Iterator[list[Run]]:
    """Collects runs made by a test and shuts them all down afterwards."""
    made: list[Run] = []
    yield made
    for run in made:
        run.close()


@pytest.fixture
def make_run(workspace: Path, home: Path, runs: list[Run]):  # type: ignore[no-untyped-def]
    """``make_run(servers, **kw)`` → a started :class:`Run`, shut down at teardown."""

    def make(servers=None, *, start=True, **kwargs):  # type: ignore[no-untyped-def]
        run = Run(workspace, home, servers, **kwargs)
        runs.append(run)
        return run.start() if start else run

    return make
