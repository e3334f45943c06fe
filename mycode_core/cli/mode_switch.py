"""Interactive ``/mode [MODE]`` and Shift+Tab: the permission mode for the rest of the session.

``default``, ``accept-edits`` and ``plan`` can be switched to at any prompt (Shift+Tab cycles
through them, as in Claude Code); ``bypass`` cannot: it drops the sandbox, so it is chosen at
start (``--permission-mode bypass``) or not at all. The switch is recorded as the config layer
``session``, so each ``permission`` event names it as the layer that set the mode.
"""

from __future__ import annotations

from typing import Any

CYCLE = ("default", "accept-edits", "plan")
"""The modes Shift+Tab steps through, in order."""
LAYER = "session"


def current_mode(runner: Any) -> str:
    """The permission mode the next tool call is decided in."""
    return str(getattr(runner.settings, "permission_mode", "default"))


def next_mode(mode: str) -> str:
    """The mode after ``mode`` in :data:`CYCLE` (``bypass`` stays: never cycled into or out)."""
    if mode not in CYCLE:
        return mode
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


def switch_mode(runner: Any, name: str) -> str:
    """Switch ``runner`` to permission mode ``name`` (no name: report it); the line to show."""
    current = current_mode(runner)
    if not name:
        return f"permission mode: {current} (switch with /mode {'|'.join(CYCLE)}, or Shift+Tab)"
    if name == current:
        return f"permission mode: {current} (already)"
    if name == "bypass":
        return "bypass drops the sandbox: start mycode with --permission-mode bypass to use it"
    if name not in CYCLE:
        return f"unknown mode {name!r}: choose one of {', '.join(CYCLE)} (still {current})"
    runner.settings.permission_mode = name
    runner.settings.layers.append((LAYER, {"permission_mode": name}))
    return f"permission mode: {name} (was {current}; for the rest of this session)"
