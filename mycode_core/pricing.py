"""What a run's model costs and takes: the price table (``prices.json``, USD per million
tokens), the models known to take images, and ``[models."NAME"]`` overrides of both (they win).
A model with no known price costs ``None`` (unknown), never 0.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ModelEntry(BaseModel):
    """``[models."NAME"]``: prices (USD per million tokens), whether it takes images, and the
    ``request`` parameters sent with each of its requests (``temperature``,
    ``reasoning_effort``, a server's own fields), never one mycode sends itself."""

    model_config = ConfigDict(extra="allow")
    input_per_mtok: float | None = Field(default=None, ge=0)
    output_per_mtok: float | None = Field(default=None, ge=0)
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    images: bool | None = None
    request: dict[str, Any] = Field(default_factory=dict)

    @field_validator("request")
    @classmethod
    def _not_ours(cls, value: dict[str, Any]) -> dict[str, Any]:
        if ours := sorted(set(value) & {"model", "messages", "tools", "stream", "stream_options"}):
            raise ValueError(f"{', '.join(ours)}: sent by mycode itself, not settable here")
        return value


class Price(BaseModel):
    """One model's prices."""

    input: float
    output: float
    cached_input: float | None = None


@functools.cache
def _table() -> dict[str, Price]:
    raw = json.loads((Path(__file__).with_name("prices.json")).read_text(encoding="utf-8"))
    return {
        name: Price(input=v[0], output=v[1], cached_input=v[2])
        for name, v in raw.items()
        if not name.startswith("_")
    }


_DATE = re.compile(r"[-@](\d{4}-?\d{2}-?\d{2}|latest)$")  # a dated or "latest" name: its model


def price_for(model: str | None, models: dict[str, Any] | None = None) -> Price | None:
    """The price of ``model``: its ``[models."NAME"]`` entry, else the bundled table."""
    if not model:
        return None
    entry = (models or {}).get(model)
    if isinstance(entry, dict):
        entry = ModelEntry.model_validate(entry)
    if isinstance(entry, ModelEntry) and entry.input_per_mtok is not None:
        return Price(
            input=entry.input_per_mtok,
            output=entry.output_per_mtok or 0.0,
            cached_input=entry.cached_input_per_mtok,
        )
    name = _DATE.sub("", model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0])
    table = _table()
    matches = (known for known in table if name == known or name.startswith(known + "-"))
    best = max(matches, key=len, default=None)  # the longest: "gpt-4o-mini" over "gpt-4o"
    return table[best] if best else None


def cost_usd(price: Price | None, usage: dict[str, int]) -> float | None:
    """USD for one reply's usage (``input_tokens`` includes ``cached_input_tokens``)."""
    if price is None:
        return None
    cached = int(usage.get("cached_input_tokens", 0) or 0)
    fresh = max(0, int(usage.get("input_tokens", 0) or 0) - cached)
    cached_price = price.cached_input if price.cached_input is not None else price.input
    total = fresh * price.input + cached * cached_price
    return (total + int(usage.get("output_tokens", 0) or 0) * price.output) / 1_000_000


# model names known to take images, after a maker's ``openai/``-style prefix
VISION_MODELS = tuple(
    "gpt-4o* gpt-4.1* gpt-5* o3* o4* claude-* gemini* *llava* *-vl* *vision* pixtral* "
    "gemma3*".split()
)


def accepts_images(settings: Any) -> bool:
    """Whether the configured model takes images: ``images = true``, else its
    ``[models."NAME"] images``, else the names in :data:`VISION_MODELS`."""
    if getattr(settings, "images", False):
        return True
    model = str(getattr(settings, "model", "") or "")
    entry = (getattr(settings, "models", None) or {}).get(model)
    said = entry.get("images") if isinstance(entry, dict) else getattr(entry, "images", None)
    if isinstance(said, bool):
        return said
    bare = model.removeprefix("openai:").rsplit("/", 1)[-1].lower()
    return any(fnmatch.fnmatch(bare, pattern) for pattern in VISION_MODELS)
