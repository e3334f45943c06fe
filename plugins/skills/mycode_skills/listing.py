"""What the model sees: the compact listing in the system prompt, and a loaded skill."""

from __future__ import annotations

import os
from pathlib import Path

from mycode_skills.skill import MAX_DESCRIPTION, Skill, fill, read_body

MAX_LISTED_FILES = 200
SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv"}

LISTING_INTRO = (
    "Skills are folders of instructions and resources for specialised tasks. When a task "
    "matches a skill's description, call load_skill with its name before you start, then "
    "follow what it says."
)


def listing(skills: list[Skill]) -> str:
    """One line per skill, ``- name: description``, in the order given (sorted by name),
    whatever its size (:func:`mycode_skills.budget.render` keeps it within a budget)."""
    lines = [LISTING_INTRO, ""]
    lines.extend(f"- {skill.name}: {bounded_description(skill.description)}" for skill in skills)
    return "\n".join(lines)


def bounded_description(description: str) -> str:
    """At most the spec's 1024 characters of a description (a longer one loads, with a
    warning, as other clients load it; the prompt stays bounded)."""
    if len(description) <= MAX_DESCRIPTION:
        return description
    return description[: MAX_DESCRIPTION - 1].rstrip() + "…"


def skill_files(folder: Path) -> tuple[list[str], int]:
    """The files under ``folder`` (relative, sorted, recursive; symlinks leading outside and
    noise folders left out) and how many there are in all."""
    root = folder.resolve()
    files: list[str] = []
    for current, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in names:
            path = Path(current) / name
            if path.is_symlink():
                try:
                    real = path.resolve(strict=True)
                except OSError:
                    continue
                if root not in real.parents:
                    continue
            files.append(path.relative_to(root).as_posix())
    files.sort()
    return files, len(files)


def loaded_text(
    skill: Skill, placeholders: dict[str, str] | None = None, session_id: str = ""
) -> tuple[str, str]:
    """``(text for the model, body)`` of a loaded skill: its body and its files.

    ``placeholders`` (:meth:`.state.SkillsState.placeholders`: ``${CLAUDE_SKILL_DIR}``, and
    in a plugin's skill ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}``) and
    ``${CLAUDE_SESSION_ID}`` are filled into the body as Claude Code fills them in
    (``[Scan](${CLAUDE_SKILL_DIR}/jobs/scan.md)``, ``python3 ${CLAUDE_PLUGIN_ROOT}/x.py``)."""
    body, truncated, size = read_body(skill)
    folder = skill.folder.resolve()
    body = fill(body, placeholders or {"${CLAUDE_SKILL_DIR}": str(folder)})
    body = body.replace("${CLAUDE_SESSION_ID}", session_id) if session_id else body
    parts = [f'<skill name="{skill.name}" folder="{folder}">', body]
    if truncated:
        parts.append(
            f"[{skill.file_name} is {size} bytes; only the start is shown. Read the rest with "
            f"read_file on {folder / skill.file_name} and an offset.]"
        )
    parts.append("</skill>")
    files, total = skill_files(folder)
    shown = files[:MAX_LISTED_FILES]
    parts.append("")
    parts.append(
        f"Files of this skill ({total}), relative to {folder}. Read them with read_file using "
        "the absolute path (folder + relative path):"
    )
    parts.extend(f"- {name}" for name in shown)
    if total > len(shown):
        parts.append(f"- … and {total - len(shown)} more")
    return "\n".join(parts), body
