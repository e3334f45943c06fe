"""The raw SSE accumulator: lenient with what OpenAI-compatible servers actually send."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mycode_core.providers.base import BrokenStream, ContextLengthExceeded, RateLimited, ServerError
from mycode_core.providers.sse import accumulate_sse, reply_from_completion


def _lines(*chunks: Any) -> list[str]:
    out: list[str] = []
    for chunk in chunks:
        text = chunk if isinstance(chunk, str) else json.dumps(chunk)
        out += [f"data: {text}", ""]
    return out


def _delta(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def test_text_streams_through_on_text_and_usage_is_recorded() -> None:
    pieces: list[str] = []
    reply = accumulate_sse(
        [
            ": keep-alive",
            "",
            *_lines(
                _delta({"role": "assistant", "content": "Hel"}),
                _delta({"content": "lo"}),
                _delta({}, "stop"),
                {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
                "[DONE]",
            ),
        ],
        pieces.append,
    )
    assert pieces == ["Hel", "lo"]
    assert (reply.content, reply.finish_reason) == ("Hello", "stop")
    assert reply.usage == {"input_tokens": 7, "output_tokens": 2}


def test_tool_call_deltas_without_index_or_with_object_arguments() -> None:
    reply = accumulate_sse(
        _lines(
            _delta({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x"'}}]}),
            _delta({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
            _delta({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]}),
            _delta({}, "tool_calls"),
        ),
        lambda _t: None,
    )
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("a", "f", {"x": 1}),
        ("b", "g", {"y": 2}),
    ]


def test_parallel_calls_interleaved_by_index() -> None:
    reply = accumulate_sse(
        _lines(
            _delta(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}},
                        {"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}},
                    ]
                }
            ),
            _delta({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
            _delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"k": 0}'}}]}),
            "[DONE]",
        ),
        lambda _t: None,
    )
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("a", '{"k": 0}'), ("b", "{}")]


def test_other_choices_are_ignored_and_multiline_data_is_joined() -> None:
    lines = [
        'data: {"choices": [{"index": 0,',
        'data:  "delta": {"content": "mine"}}]}',
        "",
        *_lines(_delta({"content": "theirs"}, index=1), _delta({}, "stop")),
    ]
    reply = accumulate_sse(lines, lambda _t: None)
    assert reply.content == "mine"


def test_a_stream_without_finish_or_done_is_broken() -> None:
    with pytest.raises(BrokenStream):
        accumulate_sse(_lines(_delta({"content": "half"})), lambda _t: None)


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (
            {"error": {"message": "This model's maximum context length is 8192 tokens"}},
            ContextLengthExceeded,
        ),
        ({"error": {"message": "Rate limit exceeded", "code": "rate_limit"}}, RateLimited),
        ({"error": {"message": "upstream exploded"}}, ServerError),
    ],
)
def test_error_payloads_in_the_stream_are_classified(payload: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        accumulate_sse(["event: error", f"data: {json.dumps(payload)}", ""], lambda _t: None)
    with pytest.raises(error):
        accumulate_sse(_lines(_delta({"content": "x"}), payload), lambda _t: None)


def test_a_plain_completion_body() -> None:
    seen: list[str] = []
    reply = reply_from_completion(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "calling",
                        "tool_calls": [
                            {
                                "id": "z",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        },
        seen.append,
    )
    assert seen == ["calling"] and reply.tool_calls[0].id == "z"
    assert reply.finish_reason == "tool_calls"
