"""A skill as the rest of the plugin sees it: the records and the few helpers that need no
parsing, so that a session whose skills all come from the index never imports the parser
(:mod:`mycode_skills.parse`, YAML and the validation rules)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL_FILE = "SKILL.md"
SKILL_FILE_LOWER = "skill.md"
"""Accepted when a folder has no ``SKILL.md`` (the agentskills.io reference tool ``skills-ref``
reads it too)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
HEAD_BYTES = 64 * 1024
"""The front matter must end within the first 64 KiB (a 10 MB file costs 64 KiB to list)."""
MAX_BODY_BYTES = 256 * 1024
"""``load_skill`` returns at most this much of the body and says where the rest is."""


def skill_file_name(folder: str, exact: bool = False) -> str | None:
    """The name of ``folder``'s skill file: ``SKILL.md``, else ``skill.md``, else ``None``;
    ``exact`` (an Agent Plugins folder, whose §7.1 names ``SKILL.md`` exactly): ``SKILL.md``
    only.

    Any entry named ``SKILL.md`` counts (a symlink or FIFO is judged by the caller). On a
    case-insensitive file system ``SKILL.md`` also finds a ``skill.md``: one folder, one file,
    never listed twice.
    """
    for name in (SKILL_FILE,) if exact else (SKILL_FILE, SKILL_FILE_LOWER):
        if os.path.lexists(os.path.join(folder, name)):
            return name
    return None


@dataclass(frozen=True)
class Skill:
    """A valid skill: what the listing shows and where its files are."""

    name: str
    description: str
    folder: Path
    source: str
    """Where it was found: ``project``, ``user``, ``agents`` or ``package:<plugin>``."""
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    renamed: str | None = None
    """The rule the front matter's ``name`` broke when the skill is listed under its folder's
    name instead: a missing ``name`` (always), or with ``[skills] folder_names`` an invalid one."""
    mismatch: str | None = None
    """The ``name-folder`` rule broken (a valid name differing from the folder's): the skill
    is listed under its ``name`` all the same, with one notice."""
    file_name: str = SKILL_FILE
    """``SKILL.md``, or ``skill.md`` in a folder that has no ``SKILL.md``."""
    warnings: tuple[str, ...] = ()
    """Rules broken that other clients let pass (agentskills.io's guide for clients: "warn,
    load anyway"): a description over 1024 characters, an optional field of the wrong type
    or length (that field is then left out). Each ends with ``[rule ...]``."""

    @property
    def file(self) -> Path:
        """The skill's ``SKILL.md`` (or ``skill.md``)."""
        return self.folder / self.file_name

    @property
    def argument_names(self) -> tuple[str, ...]:
        """Claude Code's ``arguments`` (a list or space-separated words): ``$name`` in the body
        of a skill invoked as ``/name ARGS`` is the argument at that name's position."""
        names = self.extra.get("arguments")
        names = names.split() if isinstance(names, str) else names
        return tuple(str(n) for n in names) if isinstance(names, list) else ()

    @property
    def model_invocable(self) -> bool:
        """False for Claude Code's ``disable-model-invocation: true``: only the user invokes
        the skill (``/name``); the model neither sees it listed nor loads it."""
        return _flag(self.extra.get("disable-model-invocation")) is not True

    @property
    def user_invocable(self) -> bool:
        """False for Claude Code's ``user-invocable: false``: background knowledge for the
        model, which loads it; no ``/name`` command, and ``/skill NAME`` refuses it."""
        return _flag(self.extra.get("user-invocable")) is not False

    @property
    def argument_hint(self) -> str:
        """Claude Code's ``argument-hint`` (``[issue-number]``), shown with ``/name``."""
        hint = self.extra.get("argument-hint")
        if isinstance(hint, list):  # ``[issue-number]`` read as YAML: a list
            hint = " ".join(f"[{item}]" for item in hint)
        return hint.strip() if isinstance(hint, str) and hint.strip() else "[task]"


@dataclass(frozen=True)
class SkillProblem:
    """An invalid skill: the folder, the rule it breaks and a readable message."""

    folder: Path
    rule: str
    message: str
    name: str | None = None

    def notice(self) -> str:
        """One line for the user, naming the skill and the rule."""
        who = self.name or self.folder.name
        return f"skill {who!r} ({self.folder}) not loaded: {self.message} [rule {self.rule}]"


def split_front_matter(text: str) -> tuple[str, str] | None:
    """``(yaml_text, rest)`` when ``text`` starts with a ``---`` front-matter block."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    return None


def read_body(skill: Skill) -> tuple[str, bool, int]:
    """``(body, truncated, file_size)``: the Markdown after the front matter, bounded."""
    path = skill.file
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        raw = fh.read(HEAD_BYTES + MAX_BODY_BYTES)
    text = raw.decode("utf-8", errors="replace")
    split = split_front_matter(text)
    body = split[1] if split is not None else text
    truncated = size > len(raw) or len(body.encode("utf-8")) > MAX_BODY_BYTES
    if truncated:
        body = body.encode("utf-8")[:MAX_BODY_BYTES].decode("utf-8", errors="ignore")
    return body.strip("\n"), truncated, size


def _flag(value: object) -> bool | None:
    """A front-matter boolean as Claude Code reads one: ``true``/``false``, and
    ``yes``/``no``, ``on``/``off``, ``1``/``0`` in any case; ``None`` for anything else."""
    word = str(value).strip().lower()
    if value is True or word in ("true", "yes", "on", "1"):
        return True
    if value is False or word in ("false", "no", "off", "0"):
        return False
    return None


def fill(text: str, placeholders: dict[str, str]) -> str:
    """``text`` with each placeholder (``${CLAUDE_SKILL_DIR}``...) replaced by its value."""
    for placeholder, value in placeholders.items():
        text = text.replace(placeholder, value)
    return text
