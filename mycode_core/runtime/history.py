"""Append-only conversation history, kept apart from the model view built from it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mycode_core import tokens as token_counts
from mycode_core.tokens import count_message


@dataclass(frozen=True)
class Entry:
    """One message of history with its token count computed once (``exact`` is false when
    it was the byte bound of a run whose tokenizer was not loaded yet)."""

    message: dict[str, Any]
    tokens: int
    exact: bool = True


class History:
    """Everything said in the session, in order. Entries are never changed or removed."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._messages: list[dict[str, Any]] = []
        self._tokens = 0

    def append(self, message: dict[str, Any]) -> None:
        """Add a chat-completions message."""
        exact = token_counts.exact()
        entry = Entry(message, count_message(message, bound=True), exact)
        self._entries.append(entry)
        self._messages.append(message)
        self._tokens += entry.tokens

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def __getitem__(self, index: int) -> Entry:
        return self._entries[index]

    @property
    def tokens(self) -> int:
        """Sum of the entries' token counts."""
        return self._tokens

    @property
    def message_list(self) -> list[dict[str, Any]]:
        """The live list of messages (read it, never change it): no copy on the hot path."""
        return self._messages

    def messages(self) -> list[dict[str, Any]]:
        """All messages, in order."""
        return list(self._messages)
