"""The ``[checkpoints]`` config table, checked by the core before a run (``register_settings``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CheckpointSettings(BaseModel):
    """``[checkpoints]``: whether turns are checkpointed and how much space all may take."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    max_mb: float = Field(default=500, gt=0, le=1_000_000)


def from_settings(settings: object) -> CheckpointSettings:
    """The ``[checkpoints]`` table of loaded settings (defaults when absent or unreadable)."""
    section = getattr(settings, "section", None)
    raw = section("checkpoints") if callable(section) else None
    if isinstance(raw, CheckpointSettings):
        return raw
    try:
        return CheckpointSettings.model_validate(raw or {})
    except ValueError:
        return CheckpointSettings()
