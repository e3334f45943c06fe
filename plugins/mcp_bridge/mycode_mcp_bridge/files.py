"""Atomic edits of the small JSON files the bridge owns or edits (config, approvals)."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mycode_mcp_bridge.config import read_json

_LOCK = threading.Lock()


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def update_json(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read ``path`` (``{}`` if absent), apply ``change`` in place, write it back atomically."""
    with _LOCK:
        data = read_json(path)
        change(data)
        write_json_atomic(path, data)
        return data
