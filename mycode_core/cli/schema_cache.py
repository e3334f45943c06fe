"""Tool input schemas that passed the JSON Schema check, remembered under ``MYCODE_HOME``.

Every :class:`~mycode_core.records.Tool` has its ``input_schema`` checked against the JSON
Schema metaschema when it is built; importing jsonschema for that costs some 40 ms of every
start-up, for the same schemas run after run (issue 24). A run of the CLI therefore
:func:`load`\\ s the schemas that passed before into ``records.CHECKED_SCHEMAS`` (only a schema
not seen before is checked) and :func:`save`\\ s the new ones after its tools are registered.
The file is written for one jsonschema version; a file of another version is not used.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mycode_core import records

CACHE_FILE = "schemas.json"
MAX_SCHEMAS = 1000
"""The file keeps the schemas seen most recently, at most this many."""


def _path(home: Path) -> Path:
    return home / "cache" / CACHE_FILE


def _jsonschema_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("jsonschema")
    except metadata.PackageNotFoundError:
        return "-"


def _read(home: Path) -> list[str]:
    try:
        data = json.loads(_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("jsonschema") != _jsonschema_version():
        return []
    return [item for item in data.get("schemas") or [] if isinstance(item, str)]


def load(home: Path) -> set[str]:
    """Mark the schemas remembered under ``home`` as checked; returns them."""
    known = set(_read(home))
    records.CHECKED_SCHEMAS.update(known)
    return known


def save(home: Path, known: set[str]) -> None:
    """Remember the schemas checked in this process beyond ``known`` (best effort)."""
    new = records.CHECKED_SCHEMAS - known
    if not new:
        return
    kept = [item for item in _read(home) if item not in new]
    payload = {"jsonschema": _jsonschema_version(), "schemas": (kept + sorted(new))[-MAX_SCHEMAS:]}
    path = _path(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{CACHE_FILE}.{os.getpid()}")
        temporary.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass
