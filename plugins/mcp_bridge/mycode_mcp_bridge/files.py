"""Atomic edits of the small JSON files the bridge owns or edits (config, approvals)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mycode_core.api import replace_atomically
from mycode_mcp_bridge.config import read_json

_LOCK = threading.Lock()


def update_json(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read ``path`` (``{}`` if absent), apply ``change`` in place, write it back atomically
    as indented JSON, keeping the file's mode (a new one is private: it may hold tokens)."""
    with _LOCK:
        data = read_json(path)
        change(data)
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        mode = None if path.exists() else 0o600
        replace_atomically(
            path, text.encode("utf-8"), mode, create_parents=True, follow_folder_links=True
        )
        return data
