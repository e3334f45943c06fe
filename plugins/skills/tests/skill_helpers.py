"""Fixtures of our own, shaped like published skills (never their text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write_skill(
    parent: Path,
    folder: str,
    *,
    body: str = "Follow these steps.\n",
    front: dict[str, Any] | None = None,
    raw_front: str | None = None,
    files: dict[str, str] | None = None,
    **fields: Any,
) -> Path:
    """Write ``parent/folder/SKILL.md``; ``fields`` default to a valid name and description.

    ``raw_front`` is written verbatim between the ``---`` lines (for broken YAML).
    """
    skill = parent / folder
    skill.mkdir(parents=True, exist_ok=True)
    if raw_front is None:
        data: dict[str, Any] = {"name": folder, "description": f"Helps with {folder} tasks."}
        data.update(front or {})
        data.update({key.replace("_", "-"): value for key, value in fields.items()})
        data = {key: value for key, value in data.items() if value is not None}
        raw_front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    (skill / "SKILL.md").write_text(f"---\n{raw_front}---\n{body}", encoding="utf-8")
    for name, text in (files or {}).items():
        target = skill / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return skill
