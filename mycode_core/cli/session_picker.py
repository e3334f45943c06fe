"""``/resume`` with no id: pick one of this workspace's sessions (issue 20).

Each choice, numbered newest first (typed in full and Enter: :mod:`.number_picker`), shows the
first prompt as the user typed it (never the reminders mycode added), how long ago the session
started and how many steps it took.
"""

from __future__ import annotations

import time

from mycode_core.cli.output import neutralise
from mycode_core.cli.richtext import plural
from mycode_core.sessions import SessionInfo, SessionStore

SHOWN = 15
CANCEL = "cancel"


def age(seconds: float) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago``."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{plural(int(seconds // 86400), 'day')} ago"


def describe(info: SessionInfo, now: float | None = None) -> str:
    """One line for a session: first prompt, age, steps, id (control characters shown as
    ``^[``)."""
    words = " ".join(info.first_prompt.split()) or "(no prompt)"
    words = words if len(words) <= 60 else words[:59] + "…"
    when = age((now or time.time()) - info.started)
    return neutralise(f"{words} · {when} · {plural(info.steps, 'step')} · {info.id}")


def pick_session(store: SessionStore, workspace: str, current: str | None = None) -> str | None:
    """Ask which session to resume; its id, or ``None`` (none there, or cancelled)."""
    import click

    from mycode_core.cli.number_picker import pick

    sessions = [s for s in store.list(workspace) if s.id != current][:SHOWN]
    if not sessions:
        click.echo("No earlier session in this workspace.")
        return None
    now = time.time()
    lines = [f"{n}. {describe(info, now)}" for n, info in enumerate(sessions, 1)]
    answer = pick("Resume which session?", [*lines, CANCEL])
    if answer == CANCEL:
        return None
    return sessions[lines.index(answer)].id
