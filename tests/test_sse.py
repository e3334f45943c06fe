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


def _split(content: str, size: int) -> tuple[str, str, list[str]]:
    """``content`` streamed in pieces of ``size``: (thinking, answer, the text deltas)."""
    thoughts: list[str] = []
    deltas: list[str] = []
    pieces = [content[i : i + size] for i in range(0, len(content), size)]
    reply = accumulate_sse(
        _lines(*[_delta({"content": p}) for p in pieces], _delta({}, "stop")),
        deltas.append,
        thoughts.append,
    )
    assert "".join(thoughts) == (reply.reasoning or "")
    return reply.reasoning or "", reply.content or "", deltas


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1000])
def test_a_leading_think_block_is_thinking_however_the_stream_splits_it(size: int) -> None:
    """llama-server ``--reasoning-format none``: the thoughts arrive inline in ``content``."""
    thought, answer, deltas = _split("\n<think>\nweigh a < b</thi</think>\n\nIt is 4.", size)
    assert (thought, answer) == ("\nweigh a < b</thi", "It is 4.")
    assert "".join(deltas) == "It is 4."
    thought, answer, deltas = _split("<think>cut off while thinking </th", size)
    assert (thought, answer, deltas) == ("cut off while thinking </th", "", [])


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_think_tags_anywhere_but_the_start_are_answer_text(size: int) -> None:
    for content in (
        "Wrap it in <think>…</think> tags.",
        "<thinking>not our tag</thinking>",
        "<thi",
        "  \n",
        "`<think>` then </think>",
    ):
        thought, answer, deltas = _split(content, size)
        assert (thought, answer, "".join(deltas)) == ("", content, content)


def test_the_think_splitter_holds_back_no_more_than_a_tag() -> None:
    """Each piece costs O(piece): inside the block only a possible ``</think>`` start is held."""
    from mycode_core.providers.sse import ThinkSplitter

    splitter = ThinkSplitter()
    assert splitter.feed("<think>") == ("", "")
    for _ in range(10_000):
        thought, text = splitter.feed("thinking hard </")
        assert len(splitter.held) <= len("</think") and text == ""
    assert splitter.feed("think>answer </think>") == ("", "answer </think>")
    assert splitter.feed(" more") == ("", " more") and splitter.finish() == ("", "")
    waiting = ThinkSplitter()  # whitespace before a tag is held only so long
    assert waiting.feed(" " * 200) == ("", "") and waiting.feed(" " * 100) == ("", " " * 300)
    assert waiting.feed("<think>x</think>") == ("", "<think>x</think>")
