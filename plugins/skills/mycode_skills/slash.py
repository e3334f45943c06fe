"""``/skills`` and ``/skill:NAME [task]`` (alias ``/NAME [task]``) for the interactive session
(and ``mycode -p``)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import Any


def _output(text: str) -> Any:
    from mycode_core import SlashResult

    return SlashResult(output=text)


def skills_list(arguments: str, context: Any) -> Any:
    """``/skills``: the skills the model sees, and the ones not loaded with the reason."""
    from mycode_skills.state import SkillsState

    state = SkillsState.of(context)
    snapshot = state.refresh()
    skills = snapshot.sorted()
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    lines = [_one_line(f"{s.name} ({s.source}): {s.description}", columns) for s in skills]
    if not lines:
        lines.append("No skills found.")
    # each line says itself what happened ("not loaded", "refused", "listed under its
    # folder's name"...): a warning about a skill that did load must not read "not loaded"
    lines.extend(_wrapped(f"warning: {problem}", columns) for problem in snapshot.said())
    note = state.listing(snapshot).notice() if skills else None
    if note is not None:
        lines.append(_wrapped(f"note: {note}", columns))
    lines.append("Use /NAME [task] (or /skill:NAME [task]) to load one into the next turn.")
    return _output("\n".join(lines))


def _one_line(line: str, columns: int | None) -> str:
    """``line`` shortened with ``…`` to fit a terminal of ``columns`` (``None``: not a
    terminal, kept whole); ``mycode skills show NAME`` has the whole description."""
    if columns is None or len(line) < columns:
        return line
    return line[: max(20, columns - 2)].rstrip() + "…"


def _wrapped(text: str, columns: int | None) -> str:
    """``text`` wrapped at word boundaries for a terminal of ``columns`` (``None``: as is)."""
    if columns is None:
        return text
    width = max(20, columns - 1)
    return textwrap.fill(text, width, subsequent_indent="  ", break_long_words=False)


def force_skill(name: str, task: str, context: Any) -> Any:
    """``/skill:NAME [task]``: the skill's instructions become part of the user's turn.

    Its ``$ARGUMENTS`` is the task, ``$N``/``$ARGUMENTS[N]`` one argument of it and ``$name``
    one named in its ``arguments``, as Claude Code fills them in for a skill invoked as a
    command (``The user invoked this with: $ARGUMENTS``); its ``!`cmd``` lines then run
    (:func:`~mycode_skills.tool.load`)."""
    from mycode_skills.tool import load

    # active from the turn this prompt starts
    result = load(name, context, turn=None, arguments=task.strip())
    if result.is_error:
        return _output(result.text())
    request = task.strip() or "Apply this skill to the current work; ask me if anything is unclear."
    return (
        f"{request}\n\nUse the skill {name!r}, loaded below for this turn, and follow its "
        f"instructions.\n\n{result.text()}"
    )
