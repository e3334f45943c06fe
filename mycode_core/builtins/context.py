"""Built-in ``build_context``: the base instructions, environment facts and the AGENTS.md files
(CLAUDE.md is the ``claude_compat`` plugin's)."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

from mycode_core.events import NoticeEvent
from mycode_core.hookspecs import hookimpl
from mycode_core.project_files import (
    AGENTS_FILES,
    ProjectFileRefused,
    allowed_dirs,
    instruction_files,
    read_project_text,
)

if TYPE_CHECKING:
    from mycode_core.records import ContextSection, RunContext

MAX_INSTRUCTION_CHARS = 40_000

BASE_INSTRUCTIONS = """\
You are mycode, a coding agent working in the user's workspace with tools.
Work until the task is done and verified. Make small, precise edits. After changing code,
run the relevant tests or checks and report the real outcome; on failure, fix the cause.
Never claim success without evidence. When done, reply with a short summary and no tool calls."""


@hookimpl
def build_context(context: RunContext) -> list[ContextSection]:
    """Base instructions, environment facts, your AGENTS.md and the project's AGENTS.md files."""
    from mycode_core.records import ContextSection

    sections = [ContextSection(title="", text=BASE_INSTRUCTIONS, priority=0)]
    facts = (
        f"Workspace root (tool paths are relative to it): {context.workspace}\n"
        f"Platform: {platform.system()} {platform.release()}\n"
        f"Date: {datetime.date.today().isoformat()}"
    )
    sections.append(ContextSection(title="Environment", text=facts, priority=10))
    extra = getattr(context.settings, "append_system_prompt", None)
    if extra:
        sections.append(ContextSection(title="", text=str(extra), priority=1000))
    for name in AGENTS_FILES:  # yours, for every workspace (Codex's ~/.codex/AGENTS.md)
        mine = context.home / name
        try:
            text = mine.read_text(encoding="utf-8", errors="replace")[:MAX_INSTRUCTION_CHARS]
        except OSError:
            continue
        if text.strip():  # as Codex: the first non-empty one
            heading = f"Your instructions ({mine})"
            sections.append(ContextSection(title=heading, text=text, priority=15))
            break
    allowed = allowed_dirs(context.settings)
    for path in instruction_files(context.workspace, Path(os.getcwd())):
        try:
            text = read_project_text(
                context.workspace, path, allowed=allowed, limit=4 * MAX_INSTRUCTION_CHARS
            )[:MAX_INSTRUCTION_CHARS]
        except ProjectFileRefused as exc:
            said = context.store.setdefault("core.refused_instructions", set())
            if str(exc) not in said:  # once a run, though the prompt is built again
                said.add(str(exc))
                context.emit(NoticeEvent(level="warning", message=str(exc)))
            continue
        except OSError:
            continue
        heading = f"Project instructions ({path.relative_to(context.workspace)})"
        sections.append(ContextSection(title=heading, text=text, priority=20))
    return sections


def flatten_sections(results: object) -> list[object]:
    """``build_context`` results as one flat list of sections (``None`` dropped)."""
    flat: list[object] = []
    for item in results if isinstance(results, (list, tuple)) else [results]:
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    return [item for item in flat if item is not None]


@hookimpl(wrapper=True, trylast=True, specname="build_context")
def flat_build_context(context: RunContext) -> Generator[None, object, list[object]]:
    """The innermost wrapper: a plugin's wrapper sees one flat list of sections."""
    results = yield
    return flatten_sections(results)
