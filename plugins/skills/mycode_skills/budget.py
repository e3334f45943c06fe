"""The size budget of the skills listing in the system prompt (``[skills] listing_budget``).

The budget is a share of the model's context window — by default 2% (about 4 characters a
token: 10,240 characters for the default 128,000-token window) — or a number of characters.
When every skill's ``- name: description`` line fits, the listing is as it always was.
Otherwise, in this order, until it fits:

1. every description is shortened to one common length, the longest ones first (a description
   shorter than that keeps every word), as long as that length is at least
   :data:`MIN_DESCRIPTION` characters;
2. the skills of the highest precedence (project, then user, ``~/.agents``, packages, plugin
   folders — the order of discovery) keep a description of :data:`MIN_DESCRIPTION` characters,
   the others are listed by name only;
3. every listed skill is a name only, and the skills of the lowest precedence are left out,
   with one line counting them.

The lines stay sorted by name (a stable, cacheable prompt). Whatever the listing shows,
``load_skill`` loads any skill by name (an unknown name answers with every name), and
``mycode skills`` lists everything.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from mycode_skills.listing import LISTING_INTRO, bounded_description

if TYPE_CHECKING:
    from mycode_skills.skill import Skill

CHARS_PER_TOKEN = 4
"""Characters per token for turning a share of the window into characters (as estimates
elsewhere: English text and Markdown average about four)."""
DEFAULT_BUDGET = "2%"
DEFAULT_WINDOW = 128_000
"""The core's default ``context_window`` (used when the settings carry none)."""
MIN_DESCRIPTION = 60
"""A description is not shortened below this many characters: shorter, it rarely tells when
to use the skill; the skills are then listed by name only instead."""
_SHARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

CUT_NOTE = (
    "This list is shortened to fit its budget: a description ending in … is cut, a skill "
    "without one is listed by name only. load_skill loads any skill by name in full."
)


def _omitted_line(count: int) -> str:
    return (
        f"- … and {count} more skills not listed here for room; load_skill loads them by name "
        "too (an unknown name answers with every skill's name)"
    )


def parse_budget(value: Any) -> str | int | None:
    """``value`` as a budget: ``"N%"`` (a share of the window, 0 < N ≤ 100), a number of
    characters (≥ 0) or ``"off"``; ``None`` when it is none of these."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        if value.strip().lower() == "off":
            return "off"
        match = _SHARE.match(value)
        if match and 0 < float(match.group(1)) <= 100:
            return value.strip()
    return None


class Budget(NamedTuple):
    """How many characters the listing may take (``None``: no limit), and why."""

    chars: int | None
    basis: str


def listing_budget(settings: Any, window: int | None = None) -> Budget:
    """The listing's budget from ``[skills] listing_budget`` and the model's context window:
    ``window`` (the run's ``context.context_window()``: discovered from the server, cached,
    learned or configured) or else the configured (or default) ``context_window``."""
    section = settings.section("skills") if hasattr(settings, "section") else {}
    raw = section.get("listing_budget") if hasattr(section, "get") else None
    value = parse_budget(DEFAULT_BUDGET if raw is None else raw)
    if value is None:  # checked at start-up by the settings model; a direct caller's mistake
        value = DEFAULT_BUDGET
    if value == "off":
        return Budget(None, "[skills] listing_budget = off")
    if isinstance(value, int):
        return Budget(value, f"[skills] listing_budget = {value}")
    if not (isinstance(window, int) and window > 0):
        window = getattr(settings, "context_window", None)
    window = window if isinstance(window, int) and window > 0 else DEFAULT_WINDOW
    share = float(str(value).strip().rstrip("%"))
    chars = int(window * share / 100 * CHARS_PER_TOKEN)
    return Budget(chars, f"{value} of a {window:,}-token context window")


class Rendered:
    """The listing's text and what the budget did to it (a plain class: a dataclass costs a
    millisecond to create at import, and this module is on every run's start-up path)."""

    __slots__ = ("budget", "full", "names_only", "omitted", "shortened", "text", "total")

    def __init__(
        self,
        text: str,
        budget: Budget,
        total: int,
        full: int,
        shortened: int = 0,
        names_only: int = 0,
        omitted: int = 0,
    ) -> None:
        self.text, self.budget, self.total, self.full = text, budget, total, full
        self.shortened, self.names_only, self.omitted = shortened, names_only, omitted

    @property
    def cut(self) -> bool:
        """Whether the budget changed anything."""
        return self.full < self.total

    def summary(self) -> dict[str, Any]:
        """For ``mycode skills --json`` (``listing``)."""
        return {
            "budget": self.budget.chars,
            "basis": self.budget.basis,
            "characters": len(self.text),
            "skills": self.total,
            "full": self.full,
            "shortened": self.shortened,
            "names_only": self.names_only,
            "omitted": self.omitted,
        }

    def notice(self) -> str | None:
        """One line for the user when the budget cut the listing, else ``None``."""
        if not self.cut:
            return None
        parts = [f"{self.full} with their description"]
        for count, what in (
            (self.shortened, "shortened"),
            (self.names_only, "by name only"),
            (self.omitted, "left out"),
        ):
            if count:
                parts.append(f"{count} {what}")
        return (
            f"skills listing over its budget of {self.budget.chars:,} characters "
            f"({self.budget.basis}): of {self.total} skills, {', '.join(parts)}. The model can "
            "still load any of them by name; `mycode skills` lists them all; raise "
            "[skills] listing_budget (or context_window) for more room"
        )


def shorten(text: str, most: int) -> str:
    """``text`` in at most ``most`` characters: cut at a word boundary, ending in ``…``."""
    if len(text) <= most:
        return text
    cut = text[: max(most - 1, 0)]
    space = cut.rfind(" ")
    if space >= most * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def _common_length(lengths: list[int], room: int) -> int:
    """The largest ``cap`` with ``sum(min(length, cap)) <= room`` (water filling: the
    longest descriptions give way first)."""
    remaining, left = room, len(lengths)
    for length in sorted(lengths):
        if length * left <= remaining:
            remaining -= length
            left -= 1
            continue
        return max(remaining // left, 0)
    return max(lengths, default=0)


def render(skills: list[Skill], budget: Budget) -> Rendered:
    """The listing of ``skills`` (given in precedence order) within ``budget``."""
    descriptions = {skill.name: bounded_description(skill.description) for skill in skills}
    names = sorted(descriptions)
    total = len(names)
    full_text = "\n".join([LISTING_INTRO, "", *(f"- {n}: {descriptions[n]}" for n in names)])
    if budget.chars is None or len(full_text) <= budget.chars:
        return Rendered(full_text, budget, total, total)
    fixed = len(LISTING_INTRO) + len(CUT_NOTE) + 3  # the three newlines before the lines
    name_cost = sum(len(n) + 3 for n in names)  # "- name" and its newline
    with_colons = name_cost + 2 * total  # ": " before each description
    cap = _common_length(
        [len(d) for d in descriptions.values()], budget.chars - fixed - with_colons
    )
    if cap >= MIN_DESCRIPTION:
        shown = {n: shorten(d, cap) for n, d in descriptions.items()}
        shortened = sum(1 for n in names if shown[n] != descriptions[n])
        return _assemble(names, shown, budget, total, shortened=shortened)
    if fixed + name_cost <= budget.chars:
        room = budget.chars - fixed - name_cost
        shown = {}
        for skill in skills:  # precedence order: the project's own skills first
            short = shorten(descriptions[skill.name], MIN_DESCRIPTION)
            if len(short) + 2 > room:
                break
            room -= len(short) + 2
            shown[skill.name] = short
        shortened = sum(1 for n, d in shown.items() if d != descriptions[n])
        return _assemble(
            names, shown, budget, total, shortened=shortened, names_only=total - len(shown)
        )
    room = budget.chars - fixed - len(_omitted_line(total)) - 1
    listed: list[str] = []
    for skill in skills:
        if len(skill.name) + 3 > room:
            break
        room -= len(skill.name) + 3
        listed.append(skill.name)
    return _assemble(
        sorted(listed), {}, budget, total, names_only=len(listed), omitted=total - len(listed)
    )


def _assemble(
    names: list[str], shown: dict[str, str], budget: Budget, total: int, **counts: int
) -> Rendered:
    """The cut listing: ``names`` sorted, with the descriptions in ``shown``; ``counts`` says
    how many were ``shortened``, listed by name only (``names_only``) or ``omitted``."""
    lines = [LISTING_INTRO, CUT_NOTE, ""]
    lines.extend(f"- {n}: {shown[n]}" if n in shown else f"- {n}" for n in names)
    omitted = counts.get("omitted", 0)
    if omitted:
        lines.append(_omitted_line(omitted))
    full = total - sum(counts.values())
    return Rendered("\n".join(lines), budget, total, full, **counts)
