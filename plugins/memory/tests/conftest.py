"""Fixtures shared by the memory plugin's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_memory.store import MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    """An empty store: home ``tmp_path/"home"``, workspace ``tmp_path/"ws"`` (created)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return MemoryStore(tmp_path / "home", workspace)
