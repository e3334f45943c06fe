"""The ``[subagents]`` config table."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class SubagentSettings(BaseModel):
    """``[subagents]`` in ``config.toml``.

    ``max_steps`` and ``max_tokens`` bound each child (a child never gets more steps than the
    parent's ``max_steps``, and its tokens are clamped to what remains of the parent's
    ``max_tokens``); ``max_depth`` is how deep delegation may nest (1: a child cannot delegate);
    ``max_parallel`` bounds read-only children running at once; ``model_aliases`` maps a
    profile's ``model`` (e.g. ``sonnet``) to a model id — by default Claude Code's aliases
    ``sonnet``, ``opus``, ``haiku`` and ``inherit`` mean the parent's model.
    """

    model_config = ConfigDict(extra="ignore")

    max_steps: int = Field(default=25, ge=1)
    max_tokens: int | None = Field(default=200_000, ge=0)
    max_depth: int = Field(default=1, ge=0)
    max_parallel: int = Field(default=3, ge=1)
    model_aliases: dict[str, str] = Field(default_factory=dict)


INHERIT_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku", "default", ""})


LIMITS = ("max_steps", "max_tokens", "max_depth", "max_parallel")
"""Limits an untrusted workspace's own config may lower but not raise (SPEC §8)."""


def load(settings: Any) -> tuple[SubagentSettings, list[str]]:
    """The table from the run's settings, and the notices to show: a problem line when it is
    invalid (then the defaults apply), and in an untrusted workspace one line per setting of the
    project's own config that is ignored (SPEC §8: it may only make things stricter) — its
    ``model_aliases`` (they pick models) and any limit raised above the user's (:data:`LIMITS`)."""
    section = settings.section("subagents") if hasattr(settings, "section") else {}
    try:
        config = SubagentSettings.model_validate(section or {})
    except ValidationError as exc:
        return SubagentSettings(), [_invalid(exc)]
    if trusted(settings):
        return config, []
    try:
        own = SubagentSettings.model_validate(_user_table(settings))
    except ValidationError:
        own = SubagentSettings()
    ignored: list[str] = []
    if own.model_aliases != config.model_aliases:
        config.model_aliases = own.model_aliases
        ignored.append("model_aliases of the project — it may not choose the models subagents use")
    for key in LIMITS:
        theirs, mine = getattr(config, key), getattr(own, key)
        if mine and (not theirs or theirs > mine):  # max_tokens: None or 0 is no limit
            setattr(config, key, mine)
            ignored.append(f"{key} = {theirs} of the project — it may lower it, not raise it")
    return config, [
        f"untrusted workspace: ignored [subagents] {item}. Trust it with `mycode trust` (or "
        "--trust for one run)."
        for item in ignored
    ]


def _invalid(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"[subagents] {where}: {first.get('msg')}; using the defaults"


def trusted(settings: Any) -> bool:
    """Whether the run's workspace is trusted (SPEC §8)."""
    from mycode_core import trust

    return bool(trust.state(settings)["trusted"])


def _user_table(settings: Any) -> dict[str, Any]:
    """``[subagents]`` from the layers the user controls (not the project's), merged."""
    table = settings.user_section("subagents") if hasattr(settings, "user_section") else {}
    return {"model_aliases": {}, **table}


def child_model(profile_model: str | None, config: SubagentSettings) -> str | None:
    """The model id for a child (``None``: the parent's model)."""
    name = (profile_model or "").strip()
    if name in config.model_aliases:
        return config.model_aliases[name] or None
    if name.lower() in INHERIT_ALIASES:
        return None
    return name
