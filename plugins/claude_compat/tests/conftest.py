from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cc_helpers import Env  # noqa: E402


@pytest.fixture
def env(tmp_path: Path) -> Env:
    """A fresh workspace and MYCODE_HOME with our hook script."""
    return Env(tmp_path)
