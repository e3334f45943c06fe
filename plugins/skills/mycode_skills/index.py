"""A small on-disk index of parsed skills under ``$MYCODE_HOME/cache/``, so a new session
does not import PyYAML nor parse unchanged ``SKILL.md`` files again.

Entries are keyed by the ``SKILL.md`` path and its ``(mtime_ns, size, inode)``; a changed
file is parsed again. A missing, corrupt or unwritable index only costs the parsing.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mycode_core.api import replace_atomically
from mycode_skills.skill import Skill, SkillProblem

FORMAT = 7  # 2: allowed-tools split on commas; 3: name-folder loads; 4: YAML repaired;
# 5: no name -> the folder's name, skill.md, surrogate-pair escapes joined; 6: warnings;
# 7: a SKILL.md without front matter loads
StatKey = tuple[int, int, int]


def _encode(parsed: Skill | SkillProblem) -> dict[str, Any]:
    data = asdict(parsed)
    data["folder"] = str(parsed.folder)
    data["kind"] = "skill" if isinstance(parsed, Skill) else "problem"
    if isinstance(parsed, Skill) and parsed.allowed_tools is not None:
        data["allowed_tools"] = list(parsed.allowed_tools)
    return data


def _decode(data: dict[str, Any]) -> Skill | SkillProblem:
    kind = data.pop("kind")
    data["folder"] = Path(data["folder"])
    if kind == "problem":
        return SkillProblem(**data)
    if data.get("allowed_tools") is not None:
        data["allowed_tools"] = tuple(data["allowed_tools"])
    data["warnings"] = tuple(data.get("warnings") or ())
    return Skill(**data)


class SkillIndex:
    """Parsed skills by file, read once and written back when something changed."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, tuple[StatKey, dict[str, Any]]] = {}
        self.dirty = False
        if path is None:
            return
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("format") == FORMAT:
                for file, entry in raw.get("entries", {}).items():
                    self.entries[file] = (tuple(entry["key"]), entry["value"])  # type: ignore[assignment]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self.entries = {}

    def get(self, file: str, key: StatKey) -> Skill | SkillProblem | None:
        """The parsed value stored for ``file`` if its stat key still matches."""
        entry = self.entries.get(file)
        if entry is None or tuple(entry[0]) != key:
            return None
        try:
            return _decode(dict(entry[1]))
        except (TypeError, KeyError, ValueError):
            return None

    def put(self, file: str, key: StatKey, parsed: Skill | SkillProblem) -> None:
        """Remember ``parsed`` for ``file`` at ``key``."""
        self.entries[file] = (key, _encode(parsed))
        self.dirty = True

    def save(self, keep: set[str]) -> None:
        """Write the entries of the files in ``keep`` back (atomically), if anything changed."""
        if self.path is None or not (self.dirty or set(self.entries) - keep):
            return
        data = {
            "format": FORMAT,
            "entries": {
                file: {"key": list(key), "value": value}
                for file, (key, value) in self.entries.items()
                if file in keep
            },
        }
        try:
            text = json.dumps(data, default=str).encode("utf-8")
            replace_atomically(self.path, text, create_parents=True, follow_folder_links=True)
        except (OSError, TypeError, ValueError):
            return
        self.dirty = False
