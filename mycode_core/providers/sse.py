"""Accumulating a chat-completions SSE stream into one :class:`ModelReply`, leniently: servers
omit ``index``/``id`` fields, send arguments as objects, or put an ``error`` mid-stream."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mycode_core.providers import base
from mycode_core.providers.stdhttp import ERROR_TEXT_CHARS

CONTEXT_MARKERS = tuple(
    "context_length_exceeded|maximum context length|context length|context window|too many tokens|"
    "prompt is too long|reduce the length|input is too long|context size|exceed_context_size|"
    "maximum number of tokens allowed|maximum model length|context limit|max_model_len|"
    "input validation error: `inputs` tokens".split("|")
)


def looks_like_context_overflow(text: str) -> bool:
    """Whether an error message says the prompt did not fit."""
    lowered = text.lower()
    return any(marker in lowered for marker in CONTEXT_MARKERS)


GRAMMAR_FAILURE = (
    "grammar stack",  # llama-server: the reply broke the grammar of its tool calls
    "failed to parse input",  # llama-server: a reply its chat parser could not read
)


def one_line(message: str) -> str:
    """An error message on one line, cut short, telling what a tool-call parse failure means."""
    text = " ".join(message.split())
    if len(text) > ERROR_TEXT_CHARS:
        text = text[: ERROR_TEXT_CHARS - 1] + "…"
    if any(marker in text.lower() for marker in GRAMMAR_FAILURE):
        text += " (the server could not parse the model's reply as a tool call)"
    return text


def error_from_payload(payload: Any) -> base.ModelError:
    """Classify an ``error`` object found inside a stream."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("code") or error)
        code = str(error.get("code") or error.get("type") or "")
    else:
        message, code = str(error), ""
    message = one_line(message)
    text = f"{code} {message}"
    if looks_like_context_overflow(text):
        return base.ContextLengthExceeded(f"stream error: {message}")
    if "rate" in text.lower() and "limit" in text.lower():
        return base.RateLimited(f"stream error: {message}")
    return base.ServerError(f"stream error: {message}")


def part_texts(parts: Any) -> tuple[str, str]:
    """``(thinking, text)`` of content sent as a list of parts (Mistral, proxies)."""
    if isinstance(parts, str):
        return "", parts
    thought, text = [], []
    for part in parts if isinstance(parts, list) else ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            text.append(part["text"])
        elif kind in ("thinking", "reasoning"):
            thought.append("".join(part_texts(part.get(kind, part.get("text")))))
    return "".join(thought), "".join(text)


OPEN, CLOSE = "<think>", "</think>"  # the tags of a leading thinking block
MAX_LEAD = 256  # whitespace waited through before <think>: past it, the content is answer text


class ThinkSplitter:
    """Splits streamed ``content`` into thinking and answer text, each piece in O(piece): a
    leading ``<think>…</think>`` block (llama-server ``--reasoning-format none`` and the like) is
    the model's thinking (a tag split across pieces is held back; an unterminated block is
    thinking to the end)."""

    def __init__(self) -> None:
        self.state = "lead"  # then "think", "gap" (blank lines after it, dropped), "text"
        self.held = ""

    def feed(self, piece: str) -> tuple[str, str]:
        """The thinking and the answer text that ``piece`` completes (either may be empty)."""
        if self.state == "text":
            return "", piece
        data, self.held = self.held + piece, ""
        thought = ""
        if self.state == "lead":
            head = data.lstrip()
            if head.startswith(OPEN):
                self.state, data = "think", head[len(OPEN) :]
            elif OPEN.startswith(head) and len(data) <= MAX_LEAD:
                self.held = data
                return "", ""
            else:
                self.state = "text"
                return "", data
        if self.state == "think":
            end = data.find(CLOSE)
            if end < 0:
                keep = next(
                    (k for k in range(len(CLOSE) - 1, 0, -1) if data.endswith(CLOSE[:k])),
                    0,
                )
                self.held = data[len(data) - keep :]
                return data[: len(data) - keep], ""
            thought, data = data[:end], data[end + len(CLOSE) :]
            self.state = "gap"
        answer = data.lstrip()
        if answer:
            self.state = "text"
        return thought, answer

    def finish(self) -> tuple[str, str]:
        """What was held back when the content ends, as thinking or text."""
        held, self.held = self.held, ""
        return (held, "") if self.state == "think" else ("", held)


@dataclass(slots=True)
class _Call:
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAccumulator:
    """Feeds on decoded chunks (choice 0 only); a leading ``<think>`` block is thinking."""

    def __init__(
        self, on_text: Callable[[str], None], on_reasoning: Callable[[str], None] | None = None
    ) -> None:
        self.on_text = on_text
        self.on_reasoning = on_reasoning
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.calls: list[_Call] = []
        self.by_index: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}
        self.done = False
        self.think = ThinkSplitter()

    def _hear(self, thought: str, text: str) -> None:
        if thought:
            self.reasoning.append(thought)
            if self.on_reasoning is not None:
                self.on_reasoning(thought)
        if text:
            self.text.append(text)
            self.on_text(text)

    def feed(self, chunk: dict[str, Any]) -> None:
        """Take one decoded ``chat.completion.chunk``."""
        if "error" in chunk and not chunk.get("choices"):
            raise error_from_payload(chunk)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = {
                "input_tokens": int(usage.get("prompt_tokens") or 0),
                "output_tokens": int(usage.get("completion_tokens") or 0),
            }
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict) and details.get("cached_tokens"):
                self.usage["cached_input_tokens"] = int(details["cached_tokens"] or 0)
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or int(choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            # before the content: a whole (not streamed) message has both, thinking shown first
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str):
                self._hear(thought, "")
            content = delta.get("content")
            if isinstance(content, list):
                thought, content = part_texts(content)
                self._hear(thought, "")
            if isinstance(content, str) and content:
                self._hear(*self.think.feed(content))
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self.refusal.append(refusal)
            for raw in delta.get("tool_calls") or ():
                self._feed_call(raw)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

    def _feed_call(self, raw: dict[str, Any]) -> None:
        index = raw.get("index")
        call_id = raw.get("id") or None
        call: _Call | None = None
        if isinstance(index, int):
            call = self.by_index.get(index)
            if call is not None and call_id and call.id and call_id != call.id:
                call = None  # a server reusing an index for a new call
        elif call_id:
            call = next((c for c in self.calls if c.id == call_id), None)
        elif self.calls:
            call = self.calls[-1]
        if call is None:
            call = _Call(call_id)
            self.calls.append(call)
            if isinstance(index, int):
                self.by_index[index] = call
        if call_id and not call.id:
            call.id = call_id
        function = raw.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif isinstance(arguments, dict):
            call.arguments.append(json.dumps(arguments))

    def reply(self) -> base.ModelReply:
        """The accumulated turn."""
        self._hear(*self.think.finish())
        return base.ModelReply(
            content="".join(self.text) or None,
            refusal="".join(self.refusal) or None,
            tool_calls=[
                base.ReplyToolCall(id=c.id, name=c.name, arguments="".join(c.arguments))
                for c in self.calls
                if c.name
            ],
            finish_reason=self.finish_reason,
            usage=self.usage,
            reasoning="".join(self.reasoning) or None,
        )


def accumulate_sse(
    lines: Iterable[str],
    on_text: Callable[[str], None],
    on_reasoning: Callable[[str], None] | None = None,
) -> base.ModelReply:
    """Read SSE ``lines`` (without newlines) into a reply; raise :class:`ModelError` on errors."""
    acc = StreamAccumulator(on_text, on_reasoning)
    event_name: str | None = None
    data: list[str] = []

    def dispatch() -> None:
        nonlocal event_name, data
        payload_text = "\n".join(data).strip()
        name = event_name
        event_name, data = None, []
        if not payload_text:
            return
        if payload_text == "[DONE]":
            acc.done = True
            return
        try:
            payload = json.loads(payload_text)
        except ValueError:
            if name == "error":
                raise base.ServerError(f"stream error: {payload_text[:200]}") from None
            return  # keep-alive noise or a comment some servers send
        if name == "error":
            raise error_from_payload(payload)
        if isinstance(payload, dict):
            acc.feed(payload)

    for line in lines:
        if line == "":
            dispatch()
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event_name = value
        elif field == "data":
            data.append(value)
    dispatch()
    if not acc.done and acc.finish_reason is None:
        raise base.BrokenStream("the stream ended before the model finished its reply")
    return acc.reply()


def reply_from_completion(
    body: dict[str, Any],
    on_text: Callable[[str], None],
    on_reasoning: Callable[[str], None] | None = None,
) -> base.ModelReply:
    """A non-streaming ``chat.completion`` body as a reply (text still goes through on_text)."""
    acc = StreamAccumulator(on_text, on_reasoning)
    acc.feed(body)
    return acc.reply()
