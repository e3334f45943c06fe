"""Chat-completions request bodies built from already-serialised messages.

History entries never change, so each message is turned into its JSON fragment once and the
fragment is kept for as long as the message is in the view: building a request body is one
``join`` over cached bytes plus the new messages, whatever the session length. The body goes
to the server as is (no SDK transform of the whole history).

A value JSON cannot represent (an object a plugin put in a message, a lone surrogate in a
string) never fails the request: it is sent as its text, a lone surrogate as U+FFFD (as the
events and the transcript show it).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping, Sequence
from typing import Any


def _fallback(value: Any) -> Any:
    """What ``json.dumps`` sends for a value it does not know: lists for sets and tuples,
    the text of anything else."""
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _plain(value: Any, seen: frozenset[int] = frozenset()) -> Any:
    """A copy JSON can hold: NaN/infinity become ``null``, a cycle its text."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in seen:
            return "[cycle]"
        inner = seen | {id(value)}
        if isinstance(value, dict):
            return {str(k): _plain(v, inner) for k, v in value.items()}
        return [_plain(item, inner) for item in value]
    return value


def _encode(value: Any) -> bytes:
    text = json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), default=_fallback, allow_nan=False
    )
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: U+FFFD, as in events (strict parsers
        # such as llama.cpp's reject a lone ``\ud800`` escape)
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``, never raising for an unknown type, a surrogate,
    NaN or a cycle (those are sent as U+FFFD, ``null`` and ``"[cycle]"``)."""
    try:
        return _encode(value)
    except (ValueError, RecursionError):
        return _encode(_plain(value))


class RequestBuilder:
    """Builds request bodies, serialising each message once while it stays in the view.

    The cache is keyed by the message object's identity (the object is kept alive with its
    fragment, so an identity is never reused while cached) and keeps only the messages of the
    last request, so a compacted-away message is forgotten.
    """

    def __init__(self) -> None:
        self._fragments: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        self._tools: tuple[Any, bytes] | None = None
        self._last: tuple[list[Mapping[str, Any]], bytes] = ([], b"")

    def messages_json(self, messages: Sequence[Mapping[str, Any]]) -> bytes:
        """``[m1,m2,…]`` from the cached fragments (new messages serialised now); fragments
        of messages no longer in the view are dropped once they outnumber the view.

        A view that extends the previous one (the same objects, then new ones: every step
        between compactions) reuses the previous join and looks only at the new messages."""
        previous, joined = self._last
        if len(messages) < len(previous) or not all(map(operator.is_, previous, messages)):
            previous, joined = [], b""
        cache = self._fragments
        parts = [joined] if joined else []
        for message in messages[len(previous) :]:
            cached = cache.get(id(message))
            if cached is None or cached[0] is not message:
                cached = (message, dumps(message))
                cache[id(message)] = cached
            parts.append(cached[1])
        if len(cache) > 2 * len(messages) + 64:
            keep = {id(message) for message in messages}
            self._fragments = {key: value for key, value in cache.items() if key in keep}
        joined = b",".join(parts)
        self._last = (list(messages), joined)
        return b"[" + joined + b"]"

    def body(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> bytes:
        """The whole request body: ``model``, ``messages``, ``tools`` when any, then every
        other request parameter (``max_tokens``, ``stream``, ``stream_options``, …)."""
        head = b'{"model":' + dumps(model) + b',"messages":' + self.messages_json(messages)
        parts = [head]
        if tools:
            if self._tools is None or self._tools[0] is not tools:
                self._tools = (tools, dumps(list(tools)))  # the same list object: reused
            parts.append(b',"tools":' + self._tools[1])
        for key, value in (params or {}).items():
            if value is None or key in ("model", "messages", "tools"):
                continue
            parts.append(b"," + dumps(key) + b":" + dumps(value))
        parts.append(b"}")
        return b"".join(parts)
