"""The ``[claude_compat]`` config table, checked by the core before a run
(``register_settings``). Only the user's own layers are read for it (:mod:`.loading`)."""

from __future__ import annotations

from pydantic import BaseModel


class ClaudeCompatSettings(BaseModel):
    """``[claude_compat]``: ``user_claude_settings`` reads your ``~/.claude`` too (settings,
    ``CLAUDE.md``, commands, rules), which mycode does not do unasked."""

    user_claude_settings: bool = False
