"""The ``[memory]`` config table, checked by the core before a run (``register_settings``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MemorySettings(BaseModel):
    """``[memory]``: how many tokens of notes a session's system prompt may hold."""

    budget_tokens: int = Field(default=1500, ge=0)
