"""Fixtures shared by the checkpoints tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A MYCODE_HOME outside the workspace."""
    path = tmp_path / "home"
    path.mkdir()
    return path
