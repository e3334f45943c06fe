"""Append-only conversation history, kept apart from the model view built from it."""

from __future__ import annotations

from typing import Any, NamedTuple

from mycode_core import tokens as token_counts
from mycode_core.tokens import count_message


class Entry(NamedTuple):
    """One message with its token count (``exact``: not a byte bound)."""

    message: dict[str, Any]
    tokens: int
    exact: bool = True


class History:
    """Everything said in the session, in order. Entries are never changed or removed."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []

    def append(self, message: dict[str, Any]) -> None:
        """Add a chat-completions message."""
        exact = token_counts.exact()
        self._entries.append(Entry(message, count_message(message, bound=True), exact))

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index: int) -> Entry:
        return self._entries[index]

    def messages(self) -> list[dict[str, Any]]:
        """All messages, in order."""
        return [entry.message for entry in self._entries]
