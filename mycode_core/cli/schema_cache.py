"""Tool input schemas that passed the JSON Schema check, remembered under ``MYCODE_HOME``.

Every :class:`~mycode_core.records.Tool` has its ``input_schema`` checked against the JSON
Schema metaschema when it is built; importing jsonschema for that costs some 40 ms of every
start-up, for the same schemas run after run (issue 24). A run of the CLI therefore
:func:`load`\\ s the schemas that passed before into ``records.CHECKED_SCHEMAS`` (only a schema
not seen before is checked) and :func:`save`\\ s the new ones after its tools are registered.
The file is written for one jsonschema version; a file of another version is not used.

The same file keeps the input schemas built from ``@tool`` signatures
(:data:`mycode_core.tooling.BUILT_SCHEMAS`, keyed by what each is built from).
"""

from __future__ import annotations

import json
from pathlib import Path

from mycode_core import records
from mycode_core.safeopen import replace_atomically
from mycode_core.tooling import BUILT_SCHEMAS

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


def _read(home: Path) -> tuple[list[str], dict[str, dict[str, object]]]:
    try:
        data = json.loads(_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], {}
    if not isinstance(data, dict) or data.get("jsonschema") != _jsonschema_version():
        return [], {}
    checked = [item for item in data.get("schemas") or [] if isinstance(item, str)]
    built = data.get("built")
    if not isinstance(built, dict):
        return checked, {}
    return checked, {k: v for k, v in built.items() if isinstance(v, dict) and isinstance(k, str)}


def load(home: Path) -> set[str]:
    """Mark the schemas remembered under ``home`` as checked (and the built ones as built);
    returns what was known, for :func:`save`."""
    checked, built = _read(home)
    records.CHECKED_SCHEMAS.update(checked)
    for key, schema in built.items():
        BUILT_SCHEMAS.setdefault(key, schema)
    return set(checked) | {f"built:{key}" for key in built}


def save(home: Path, known: set[str]) -> None:
    """Remember the schemas checked or built in this process beyond ``known`` (best effort)."""
    new = records.CHECKED_SCHEMAS - known
    new_built = {k: v for k, v in BUILT_SCHEMAS.items() if f"built:{k}" not in known}
    if not new and not new_built:
        return
    checked, built = _read(home)
    kept = [item for item in checked if item not in new]
    built.update(new_built)
    payload = {
        "jsonschema": _jsonschema_version(),
        "schemas": (kept + sorted(new))[-MAX_SCHEMAS:],
        "built": dict(list(built.items())[-MAX_SCHEMAS:]),
    }
    text = json.dumps(payload).encode()
    try:
        replace_atomically(_path(home), text, create_parents=True, follow_folder_links=True)
    except OSError:
        pass
