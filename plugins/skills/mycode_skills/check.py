"""Checking a folder of skills without loading them: what ``mycode plugins validate`` reports
about a plugin folder's skills (through the ``validate_skills`` hook this plugin adds)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mycode_core.project_files import link_refusal
from mycode_skills.discovery import Catalog, Location, conforming
from mycode_skills.parse import Skill, SkillProblem, parse_skill


def _finding(skill: str, folder: str, rule: str, message: str, loaded: bool) -> dict[str, Any]:
    return {"skill": skill, "folder": folder, "rule": rule, "message": message, "loaded": loaded}


def _remark(text: str) -> tuple[str, str]:
    """``(message, rule)`` of a remark written ``message [rule RULE]``."""
    message, _, rule = text.rpartition(" [rule ")
    return (message, rule.rstrip("]")) if rule else (text, "")


def check_skills(
    path: Path, root: Path | None, folder_names: bool, strict: bool
) -> list[dict[str, Any]]:
    """Every problem of the skills under ``path`` as a run would read them (a Claude Code or
    Codex folder with ``folder_names``, an Agent Plugins folder ``strict``): the skills not
    loaded and why, and the remarks on those that load — including the ones a run keeps
    quiet about in plugin folders (a display name, a name differing from its folder, an
    over-long description, an optional field of the wrong type, no front matter)."""
    confined = root.resolve() if root is not None else None
    location = Location(path, "plugin:check", confined, folder_names, strict)
    findings: list[dict[str, Any]] = []
    refused: list[str] = []
    lenient = folder_names and not strict
    for folder, _link, name in Catalog([]).candidates(location, refused):
        file = os.path.join(folder, name)
        if confined is not None and os.path.islink(file):
            message = link_refusal(confined, Path(file))
            if message is not None:
                findings.append(_finding(Path(folder).name, folder, "symlink", message, False))
                continue
        parsed: Skill | SkillProblem = parse_skill(Path(folder), "plugin:check", lenient)
        if strict:
            parsed = conforming(parsed)
        if isinstance(parsed, SkillProblem):
            who = parsed.name or Path(folder).name
            findings.append(_finding(who, folder, parsed.rule, parsed.message, False))
            continue
        for remark in (parsed.renamed, parsed.mismatch, *parsed.warnings):
            if remark is not None:
                message, rule = _remark(remark)
                findings.append(_finding(parsed.name, folder, rule, message, True))
    findings.extend(_finding("", str(path), "location", line, False) for line in refused)
    return findings
