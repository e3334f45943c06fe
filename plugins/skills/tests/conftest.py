"""Make ``skill_helpers`` importable (pytest runs with ``--import-mode=importlib``); fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``HOME`` is an empty ``tmp_path/user-home`` and the current folder is ``tmp_path``."""
    user = tmp_path / "user-home"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(tmp_path)
    return user
