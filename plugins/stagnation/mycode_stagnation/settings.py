"""The ``[stagnation]`` config table, checked by the core before a run (``register_settings``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StagnationSettings(BaseModel):
    """``[stagnation]``: thresholds of the default stagnation policy."""

    model_config = ConfigDict(extra="allow")
    enabled: bool = True
    repeat_threshold: int = Field(default=3, ge=2, le=1000)
    hard_after_guidance: int = Field(default=3, ge=1, le=1000)
    window: int = Field(default=12, ge=2, le=10_000)
