"""The ``[skills]`` config table, checked by the core before a run (``register_settings``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, field_validator


class SkillsSettings(BaseModel):
    """``[skills]``: how skills are named and how much of the prompt their listing may take."""

    folder_names: bool = True
    """A ``name`` breaking a naming rule gives way to a valid folder name (with a warning)."""
    listing_budget: int | str = "2%"
    """The listing's size: ``"N%"`` of the context window (about four characters a token), a
    number of characters, or ``"off"`` (no limit)."""

    @field_validator("listing_budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        from mycode_skills.budget import parse_budget

        parsed = parse_budget(value)
        if parsed is None:
            raise ValueError(
                'expected a share of the context window such as "2%", a number of characters '
                '(0 or more) or "off"'
            )
        return parsed
