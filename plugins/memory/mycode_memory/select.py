"""Choosing the notes a session sees, within a token budget.

Order: notes sharing more words with the session's first task come first; among equals the
newest first. Notes are added in that order until the budget (``[memory] budget_tokens``,
default 1500) is used; the rest are counted in one closing line. The section is computed
once per session, so the system prompt stays the same from turn to turn (cacheable).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from mycode_memory.store import Note

DEFAULT_BUDGET = 1500
_WORD = re.compile(r"[a-z0-9_]{3,}")
_STOP = frozenset(
    "the and for are but not you all any can had her was one our out has have this that with "
    "from they will would there their what when which into than then them these those use "
    "used using please make sure should".split()
)


def words(text: str) -> set[str]:
    """The lowercase content words of ``text``."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def rank(notes: list[Note], task: str) -> list[Note]:
    """``notes`` by relevance to ``task`` (shared words), then newest first."""
    wanted = words(task)
    return sorted(notes, key=lambda note: (-len(words(note.text) & wanted), -note.created))


def _age(created: float, now: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(created or now))


def render_notes(
    notes: list[Note], task: str, budget: int, count: Callable[[str], int]
) -> str | None:
    """The memory section's text, or ``None`` when there is no note."""
    if not notes:
        return None
    now = time.time()
    intro = (
        "Notes remembered from earlier sessions (newest and most relevant first). They may be "
        "out of date: check before relying on them. Save new lasting facts with remember."
    )
    lines = [intro, ""]
    used = count(intro)
    left = 0
    for note in rank(notes, task):
        text = " ".join(note.text.split())
        line = f"- [{note.scope}, {_age(note.created, now)}] {text}"
        cost = count(line) + 1
        if used + cost > budget:
            left += 1
            continue
        used += cost
        lines.append(line)
    if left:
        lines.append(f"- … {left} more notes not shown (mycode memory list)")
    return "\n".join(lines)
