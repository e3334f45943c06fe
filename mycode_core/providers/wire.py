"""Request bodies from messages each serialised once (a body joins cached bytes); a value JSON
cannot represent is sent as its text, a lone surrogate as U+FFFD: it never fails the request."""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping, Sequence
from typing import Any


def _fallback(value: Any) -> Any:
    """What ``json.dumps`` sends for an unknown value: a list for a set or tuple, else text."""
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
    except UnicodeEncodeError:  # a lone surrogate: strict parsers (llama.cpp) reject \ud800
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``, never raising (NaN is ``null``, a cycle ``"[cycle]"``)."""
    try:
        return _encode(value)
    except (ValueError, RecursionError):
        return _encode(_plain(value))


class RequestBuilder:
    """Builds request bodies, serialising each message once while it stays in the view (keyed
    by identity: the message is kept alive with its fragment, so an id is never reused)."""

    def __init__(self) -> None:
        self._fragments: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        self._tools: tuple[Any, bytes] | None = None
        self._last: tuple[list[Mapping[str, Any]], bytes] = ([], b"")

    def messages_json(self, messages: Sequence[Mapping[str, Any]]) -> bytes:
        """``[m1,m2,…]`` from the cached fragments (a view extending the last reuses its join)."""
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
        """The request body: ``model``, ``messages``, ``tools`` when any, then ``params``."""
        parts = [b'{"model":' + dumps(model) + b',"messages":' + self.messages_json(messages)]
        if tools:
            if self._tools is None or self._tools[0] is not tools:
                self._tools = (tools, dumps(list(tools)))  # the same list object: reused
            parts.append(b',"tools":' + self._tools[1])
        for key, value in (params or {}).items():
            if value is not None and key not in ("model", "messages", "tools"):
                parts.append(b"," + dumps(key) + b":" + dumps(value))
        parts.append(b"}")
        return b"".join(parts)
