"""The model view: what the model sees each step, built from history within a token budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mycode_core.records import ContextSection
from mycode_core.runtime.history import History
from mycode_core.runtime.tokens import count_text

Compactor = Callable[[list[dict[str, Any]], int], list[dict[str, Any]] | None]


def render_system_prompt(sections: list[ContextSection]) -> str:
    """Join ``build_context`` sections into one system prompt, lowest priority first."""
    ordered = sorted(sections, key=lambda section: section.priority)
    parts = []
    for section in ordered:
        text = section.text.strip()
        if not text:
            continue
        parts.append(f"# {section.title}\n\n{text}" if section.title else text)
    return "\n\n".join(parts)


class ModelView:
    """Builds the message list for each model call."""

    def __init__(self, system_prompt: str, budget: int, compactor: Compactor) -> None:
        self.system_message = {"role": "system", "content": system_prompt}
        self.system_tokens = count_text(system_prompt) + 4
        self.budget = budget
        self._compactor = compactor

    def set_system_prompt(self, system_prompt: str) -> None:
        """Replace the system prompt (a no-op when the text is unchanged)."""
        if system_prompt != self.system_message["content"]:
            self.system_message = {"role": "system", "content": system_prompt}
            self.system_tokens = count_text(system_prompt) + 4

    def build(
        self, history: History, *, force_compact: bool = False
    ) -> tuple[list[dict[str, Any]], bool]:
        """Return ``(messages, compacted)``. History is never changed.

        When everything fits the whole history is sent; the cost is one list copy, so per-step
        overhead does not grow with the token arithmetic of a long session.
        """
        messages = [self.system_message, *history.message_list]
        if not force_compact and self.system_tokens + history.tokens <= self.budget:
            return messages, False
        compacted = self._compactor(messages, self.budget)
        if compacted is None:
            return messages, False
        return compacted, True
