"""The ``[context]`` config table, read leniently (a bad value falls back to its default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STRATEGIES = ("mask+summary", "mask", "summary", "off")


@dataclass(frozen=True)
class EngineSettings:
    """Knobs of the context engine (``[context]`` in config.toml)."""

    compact_threshold: float = 0.8
    """The core compacts when the view passes this share of the budget; below it, the core
    offers the view every ``keep_recent_results`` new results only to mask old ones."""
    compact_target: float = 0.5
    """A compaction brings the view down to this share of the budget (the core triggers it at
    ``compact_threshold``, 0.8): several steps pass between two compactions."""
    keep_recent_results: int = 10
    """Tool results kept whole; older ones are masked to a one-line placeholder."""
    strategy: str = "mask+summary"
    """``mask+summary``, ``mask``, ``summary`` or ``off`` (truncation at the hard limit only)."""
    keep_recent: float = 0.3
    """Share of the budget the verbatim recent turns may take after a compaction."""
    summary_share: float = 0.15
    """Share of the budget the model-written summary may take."""
    big_result_share: float = 0.12
    """A tool result over this share of the budget is shown as head + tail + artifact path."""
    max_result_tokens: int = 6_000
    """…and over this many tokens, whatever the budget."""
    max_argument_chars: int = 4_000
    """Tool-call arguments longer than this are elided in the view."""
    recent_results: int = 6
    """Tool results kept whole in the turns a summary keeps (at most ``keep_recent_results``)."""
    summarizer: bool = True
    """Ask the model for a summary (``false``: only the runtime's recorded facts)."""


_last: tuple[Any, Any, EngineSettings] | None = None
"""The settings object read last, its ``context`` table and what they gave (every hook call
asks again)."""


def engine_settings(settings: Any) -> EngineSettings:
    """The engine's settings from a run's :class:`~mycode_core.config.Settings` (read once
    per settings object: a run's settings do not change)."""
    global _last
    last, table = _last, getattr(settings, "context", None)
    if last is not None and last[0] is settings and last[1] is table:
        return last[2]
    result = _read(settings)
    _last = (settings, table, result)
    return result


def _read(settings: Any) -> EngineSettings:
    raw: dict[str, Any] = {}
    section = getattr(settings, "section", None)
    if callable(section):
        raw = section("context")
    defaults = EngineSettings()
    values: dict[str, Any] = {}
    for name, default in vars(defaults).items():
        value = raw.get(name, default)
        try:
            if isinstance(default, str):
                values[name] = value if value in STRATEGIES else default
            elif isinstance(default, bool):
                values[name] = value if isinstance(value, bool) else default
            elif isinstance(default, int):
                values[name] = max(1, int(value))
            else:
                values[name] = min(1.0 if name == "compact_threshold" else 0.9, float(value))
                values[name] = max(0.01, values[name])
        except (TypeError, ValueError):
            values[name] = default
    return EngineSettings(**values)
