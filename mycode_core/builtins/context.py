"""Built-in ``build_context``: the base instructions and the project's AGENTS.md / CLAUDE.md
(with CLAUDE.md's ``@path`` imports, :mod:`.imports`)."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

from mycode_core.builtins.imports import imports_of
from mycode_core.events import NoticeEvent
from mycode_core.hookspecs import hookimpl
from mycode_core.project_files import (
    ProjectFileRefused,
    allowed_dirs,
    folders_down_to,
    read_project_text,
)

if TYPE_CHECKING:
    from mycode_core.records import ContextSection, RunContext

# per folder, the first existing name of each group (Codex: the override wins its folder)
INSTRUCTION_FILES = (
    ("AGENTS.override.md", "AGENTS.md"),
    ("CLAUDE.md",),
    (".claude/CLAUDE.md",),
    ("CLAUDE.local.md",),
)
MAX_INSTRUCTION_CHARS = 40_000

BASE_INSTRUCTIONS = """\
You are mycode, a coding agent working in the user's workspace with tools.
Work until the task is done and verified. Make small, precise edits. After changing code,
run the relevant tests or checks and report the real outcome; on failure, fix the cause.
Never claim success without evidence. When done, reply with a short summary and no tool calls."""


def instruction_files(workspace: Path, current: Path | None = None) -> list[Path]:
    """The instruction files from the workspace root down to ``current`` (inside it)."""
    found = []
    for folder in folders_down_to(workspace, current):
        for names in INSTRUCTION_FILES:
            # a symlink counts too: reading it decides
            found += [p for p in (folder / n for n in names) if os.path.lexists(p)][:1]
    return found


@hookimpl
def build_context(context: RunContext) -> list[ContextSection]:
    """Base instructions, environment facts, your AGENTS.md and the project's instruction files."""
    from mycode_core.records import ContextSection

    sections = [ContextSection(title="", text=BASE_INSTRUCTIONS, priority=0)]
    facts = (
        f"Workspace root (tool paths are relative to it): {context.workspace}\n"
        f"Platform: {platform.system()} {platform.release()}\n"
        f"Date: {datetime.date.today().isoformat()}"
    )
    sections.append(ContextSection(title="Environment", text=facts, priority=10))
    allowed = allowed_dirs(context.settings)

    def read(path: Path) -> str:
        return read_project_text(
            context.workspace, path, allowed=allowed, limit=4 * MAX_INSTRUCTION_CHARS
        )[:MAX_INSTRUCTION_CHARS]

    def refused(message: str) -> None:
        said = context.store.setdefault("core.refused_instructions", set())
        if message not in said:  # once a run, though the prompt is built again
            said.add(message)
            context.emit(NoticeEvent(level="warning", message=message))

    def title(path: Path) -> str:
        inside = path.is_relative_to(context.workspace)
        return str(path.relative_to(context.workspace) if inside else path)

    extra = getattr(context.settings, "append_system_prompt", None)
    if extra:
        sections.append(ContextSection(title="", text=str(extra), priority=1000))
    for name in INSTRUCTION_FILES[0]:  # yours, for every workspace (Codex's ~/.codex/AGENTS.md)
        mine = context.home / name
        try:
            text = mine.read_text(encoding="utf-8", errors="replace")[:MAX_INSTRUCTION_CHARS]
        except OSError:
            continue
        if text.strip():  # as Codex: the first non-empty one
            heading = f"Your instructions ({mine})"
            sections.append(ContextSection(title=heading, text=text, priority=15))
            break
    files = instruction_files(context.workspace, Path(os.getcwd()))
    seen = {os.path.abspath(path) for path in files}
    for path in files:
        try:
            text = read(path)
        except ProjectFileRefused as exc:
            refused(str(exc))
            continue
        except OSError:
            continue
        heading = f"Project instructions ({title(path)})"
        sections.append(ContextSection(title=heading, text=text, priority=20))
        if not path.name.startswith("CLAUDE."):  # Claude Code's files import, AGENTS.md not
            continue
        for target, importer, content in imports_of(path, text, read, seen, refused):
            heading = f"Project instructions ({title(target)}, imported by {title(importer)})"
            sections.append(ContextSection(title=heading, text=content, priority=20))
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
