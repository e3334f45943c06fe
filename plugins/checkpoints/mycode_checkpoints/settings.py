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
    return with_ignored(settings)[0]


def with_ignored(settings: object) -> tuple[CheckpointSettings, list[str]]:
    """:func:`from_settings`, and one notice per setting of an untrusted workspace's own config
    that is ignored (SPEC §8): its ``enabled = false`` would leave its turns without undo, its
    ``max_mb`` would drop the checkpoints of every other workspace — so only yours count."""
    from mycode_core import trust

    section = getattr(settings, "section", None)
    raw = section("checkpoints") if callable(section) else None
    layers = getattr(settings, "layers", None) or []
    ignored: list[str] = []
    if layers and not trust.state(settings)["trusted"]:
        raw = settings.user_section("checkpoints")  # type: ignore[attr-defined]
        for name, data in layers:
            table = data.get("checkpoints") if name in trust.PROJECT_LAYERS else None
            if isinstance(table, dict):
                ignored += [f"{key} = {value!r} ({name} config)" for key, value in table.items()]
    notices = [
        f"untrusted workspace: ignored [checkpoints] {item} — undo of your workspaces is yours "
        "to set. Trust it with `mycode trust` (or --trust for one run)."
        for item in ignored
    ]
    if isinstance(raw, CheckpointSettings):
        return raw, notices
    try:
        return CheckpointSettings.model_validate(raw or {}), notices
    except ValueError:
        return CheckpointSettings(), notices
