"""The ``SessionStart`` context of a session, kept for when it is resumed.

In Claude Code what a session's ``startup`` hooks said is in its conversation history, so a
resumed session still has it — which is why plugins match ``startup|clear|compact`` and not
``resume`` (obra/superpowers). mycode pins that context in the system prompt of one run: it is
kept here, under ``MYCODE_HOME`` (never in the workspace), keyed by session id, and pinned
again on ``--resume``, ``--continue`` and ``/resume``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mycode_core.api import replace_atomically


def _path(context: Any) -> Path:
    return Path(context.home) / "claude_compat" / "session_start" / f"{context.session_id}.json"


def keep(context: Any, lines: list[str], notice: Callable[[str], None]) -> None:
    """What a session's ``startup`` (or ``/clear``) hooks said, replacing what was kept; a
    file that cannot be written is one ``notice``."""
    path = _path(context)
    try:
        if lines:
            data = json.dumps(lines).encode()
            replace_atomically(path, data, create_parents=True, follow_folder_links=True)
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        notice(f"SessionStart context not kept for a --resume: {exc}")


def kept(context: Any) -> list[str]:
    """The context kept for the session being resumed (none if nothing was)."""
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(_path(context).read_text(encoding="utf-8"))
        if isinstance(data, list):
            return [line for line in data if isinstance(line, str)]
    return []
