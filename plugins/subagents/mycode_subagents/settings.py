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


def load(settings: Any) -> tuple[SubagentSettings, str | None]:
    """The table from the run's settings, and a problem line when it is invalid (then the
    defaults apply). An untrusted workspace's own config may not pick models (SPEC §8): its
    ``model_aliases`` are ignored."""
    section = settings.section("subagents") if hasattr(settings, "section") else {}
    try:
        config = SubagentSettings.model_validate(section or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return SubagentSettings(), f"[subagents] {where}: {first.get('msg')}; using the defaults"
    if trusted(settings):
        return config, None
    users = _user_aliases(settings)
    if users == config.model_aliases:
        return config, None
    config.model_aliases = users
    return config, (
        "untrusted workspace: ignored [subagents] model_aliases of the project — it may not "
        "choose the models subagents use. Trust it with `mycode trust` (or --trust for one run)."
    )


def trusted(settings: Any) -> bool:
    """Whether the run's workspace is trusted (SPEC §8)."""
    from mycode_core import trust

    return bool(trust.state(settings)["trusted"])


def _user_aliases(settings: Any) -> dict[str, str]:
    """``model_aliases`` from the layers the user controls (not the project's)."""
    from mycode_core import trust

    aliases: dict[str, str] = {}
    for name, data in getattr(settings, "layers", None) or []:
        table = data.get("subagents") if name not in trust.PROJECT_LAYERS else None
        if isinstance(table, dict) and isinstance(table.get("model_aliases"), dict):
            aliases.update({str(k): str(v) for k, v in table["model_aliases"].items()})
    return aliases


def child_model(profile_model: str | None, config: SubagentSettings) -> str | None:
    """The model id for a child (``None``: the parent's model)."""
    name = (profile_model or "").strip()
    if name in config.model_aliases:
        return config.model_aliases[name] or None
    if name.lower() in INHERIT_ALIASES:
        return None
    return name
