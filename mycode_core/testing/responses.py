"""Scripted answers for :class:`~mycode_core.testing.FakeOpenAIServer` and the bytes they send.

Build them with :func:`turn` (SSE or JSON, as the request asks), :func:`completion` (always a
JSON body), :func:`sse_stream` / :func:`raw_sse` (always a stream), :func:`http_error`,
:func:`dropped_connection`, :func:`cut_stream`, :func:`stalled_stream` and :func:`delayed`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_FINAL_TEXT = "All done."


@dataclass
class FakeResponse:
    """One scripted answer of :class:`FakeOpenAIServer`; build it with the helper functions.

    ``kind`` is ``turn`` (SSE or JSON, whichever the request asked for), ``body`` (fixed
    bytes with ``status`` and ``headers``), ``drop`` (close the socket without answering) or
    ``cut`` (send ``chunks`` of a stream, then close without ``finish_reason`` or ``[DONE]``;
    with ``hold``, first keep the connection open that many seconds).
    """

    kind: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: list[bytes] = field(default_factory=list)
    turn: dict[str, Any] | None = None
    delay: float = 0.0
    hold: float = 0.0


def _call_entries(tool_calls: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    calls = []
    for call in tool_calls or ():
        arguments = call.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append({"id": call.get("id"), "name": str(call["name"]), "arguments": arguments})
    return calls


def turn(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    omit_index: bool = False,
    chunk_size: int = 8,
    reasoning: str | None = None,
) -> FakeResponse:
    """A model turn, sent as SSE when the request asks to stream and as JSON otherwise.

    ``tool_calls`` are ``{"name", "arguments" (object or JSON string), "id"?}``; a call
    without ``id`` is sent without one. ``usage`` is ``{"prompt_tokens",
    "completion_tokens"}``. ``omit_index`` leaves ``index`` out of tool-call deltas, as some
    servers do. ``reasoning`` is the model's thinking, sent before the answer as
    ``reasoning_content`` (as llama.cpp and vLLM send it).
    """
    return FakeResponse(
        kind="turn",
        turn={
            "content": content,
            "tool_calls": _call_entries(tool_calls),
            "finish_reason": finish_reason,
            "usage": dict(usage) if usage else None,
            "omit_index": omit_index,
            "chunk_size": max(1, chunk_size),
            "reasoning": reasoning,
        },
    )


def _finish(spec: Mapping[str, Any]) -> str:
    return str(spec.get("finish_reason") or ("tool_calls" if spec.get("tool_calls") else "stop"))


def _usage_block(usage: Mapping[str, int]) -> dict[str, int]:
    prompt = int(usage.get("prompt_tokens", 0))
    completion_tokens = int(usage.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion_body(spec: Mapping[str, Any], model: str = "fake-model") -> dict[str, Any]:
    """A ``chat.completion`` object for a turn spec (as made by :func:`turn`)."""
    message: dict[str, Any] = {"role": "assistant", "content": spec.get("content")}
    if spec.get("reasoning"):
        message["reasoning_content"] = spec["reasoning"]
    calls = spec.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                **({"id": c["id"]} if c.get("id") else {}),
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(spec)}],
    }
    if spec.get("usage"):
        body["usage"] = _usage_block(spec["usage"])
    return body


def _sse(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {text}\n\n".encode()


def stream_chunks(
    spec: Mapping[str, Any], model: str = "fake-model", *, finish: bool = True
) -> list[bytes]:
    """The SSE events of a turn spec; with ``finish=False`` no finish_reason, usage or [DONE]."""
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return _sse({**base, "choices": [choice]})

    size = int(spec.get("chunk_size") or 8)
    out = [chunk({"role": "assistant", "content": ""})]
    thought = spec.get("reasoning") or ""
    out += [
        chunk({"reasoning_content": thought[i : i + size]}) for i in range(0, len(thought), size)
    ]
    content = spec.get("content") or ""
    out += [chunk({"content": content[i : i + size]}) for i in range(0, len(content), size)]
    for index, call in enumerate(spec.get("tool_calls") or []):
        head: dict[str, Any] = {
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        if call.get("id"):
            head["id"] = call["id"]
        if not spec.get("omit_index"):
            head["index"] = index
        out.append(chunk({"tool_calls": [head]}))
        arguments = call["arguments"]
        for i in range(0, len(arguments), size):
            part: dict[str, Any] = {"function": {"arguments": arguments[i : i + size]}}
            if not spec.get("omit_index"):
                part["index"] = index
            out.append(chunk({"tool_calls": [part]}))
    if not finish:
        return out
    out.append(chunk({}, _finish(spec)))
    if spec.get("usage"):
        out.append(_sse({**base, "choices": [], "usage": _usage_block(spec["usage"])}))
    out.append(_sse("[DONE]"))
    return out


def completion(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
) -> FakeResponse:
    """Always a JSON ``chat.completion`` body, even if the request asked to stream."""
    spec = turn(content, tool_calls, finish_reason=finish_reason, usage=usage).turn or {}
    return FakeResponse(
        kind="body",
        headers={"Content-Type": "application/json"},
        body=json.dumps(completion_body(spec)).encode(),
    )


def sse_stream(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    omit_index: bool = False,
) -> FakeResponse:
    """Always an SSE stream of the turn, even if the request did not ask to stream."""
    spec = (
        turn(
            content, tool_calls, finish_reason=finish_reason, usage=usage, omit_index=omit_index
        ).turn
        or {}
    )
    return raw_sse(b"".join(stream_chunks(spec)))


def raw_sse(data: bytes | str) -> FakeResponse:
    """These exact bytes as a ``text/event-stream`` response with status 200."""
    raw = data.encode() if isinstance(data, str) else data
    return FakeResponse(kind="body", headers={"Content-Type": "text/event-stream"}, body=raw)


def http_error(
    status: int,
    message: str = "error",
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    error_type: str = "server_error",
    code: str | None = None,
) -> FakeResponse:
    """An HTTP error. ``body`` (a JSON value or bytes) replaces the OpenAI-style error object;
    ``headers`` may carry e.g. ``Retry-After``."""
    if body is None:
        body = {"error": {"message": message, "type": error_type, "code": code}}
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return FakeResponse(
        kind="body",
        status=status,
        headers={"Content-Type": "application/json", **dict(headers or {})},
        body=raw,
    )


def dropped_connection() -> FakeResponse:
    """Close the connection without sending any response."""
    return FakeResponse(kind="drop")


def cut_stream(content: str = "Partial answer that never", **turn_options: Any) -> FakeResponse:
    """Start a 200 SSE stream, send some chunks, then close without finish_reason or [DONE]."""
    spec = turn(content, **turn_options).turn or {}
    return FakeResponse(
        kind="cut",
        headers={"Content-Type": "text/event-stream"},
        chunks=stream_chunks(spec, finish=False),
    )


def stalled_stream(content: str, seconds: float = 120.0) -> FakeResponse:
    """Stream ``content``, then send nothing for ``seconds`` (a model the user interrupts)."""
    spec = turn(content).turn or {}
    return FakeResponse(
        kind="cut",
        headers={"Content-Type": "text/event-stream"},
        chunks=stream_chunks(spec, finish=False),
        hold=seconds,
    )


def delayed(seconds: float, response: FakeResponse | None = None) -> FakeResponse:
    """Wait ``seconds`` before answering with ``response`` (default: the plain final text)."""
    inner = response or turn(DEFAULT_FINAL_TEXT)
    return FakeResponse(
        kind=inner.kind,
        status=inner.status,
        headers=dict(inner.headers),
        body=inner.body,
        chunks=list(inner.chunks),
        turn=inner.turn,
        delay=inner.delay + seconds,
    )


OPENAI_OVERFLOW = (
    "This model's maximum context length is {limit} tokens. However, you requested {requested} "
    "tokens ({prompt} in the messages, {completion} in the completion). Please reduce the length "
    "of the messages or completion."
)
"""The phrasing OpenAI and vLLM use; pass another as ``overflow_message`` (placeholders
``{limit}``, ``{requested}``, ``{prompt}``, ``{completion}``)."""
LLAMA_CPP_OVERFLOW = (
    "request ({prompt} tokens) exceeds the available context size ({limit} tokens), try "
    "increasing it"
)
"""llama-server's phrasing; with it the error body is llama-server's too (``type``
``exceed_context_size_error``, ``code`` 400, ``n_prompt_tokens``, ``n_ctx``)."""
OPENROUTER_OVERFLOW = (
    "This endpoint's maximum context length is {limit} tokens. However, you requested about "
    "{requested} tokens ({prompt} of text input, {completion} in the output). Please reduce the "
    'length of either one, or use the "middle-out" transform to compress your prompt '
    "automatically."
)
NO_LIMIT_OVERFLOW = "the input is too long for this model"
NO_JINJA_TOOLS = "tools param requires --jinja flag"
"""What ``llama-server --no-jinja`` answers (HTTP 500, ``server_error``) to a request with tools."""
NO_MMPROJ_IMAGE = (
    "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
)
"""What a ``llama-server`` without ``--mmproj`` answers (HTTP 500) to a request with an image."""
LOADING_MODEL = {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}
"""What ``llama-server`` answers (HTTP 503) to every request, ``/health`` too, until its model
has loaded."""


def has_image(body: Any) -> bool:
    """Whether a chat request carries an ``image_url`` content part."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") == "image_url" for part in content
        ):
            return True
    return False
