"""Request bodies built once per step from cached per-message JSON (issue 24), sent as is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_core.providers.openai_compat import OpenAICompatibleModel
from mycode_core.providers.wire import RequestBuilder, dumps
from mycode_core.testing import FakeOpenAIServer, make_runner, run_events, turn


class Counted:
    """An object JSON does not know; counts how often it is turned into text."""

    def __init__(self) -> None:
        self.calls = 0

    def __str__(self) -> str:
        self.calls += 1
        return "counted"


def test_each_message_is_serialised_once_while_in_the_view() -> None:
    builder = RequestBuilder()
    marker = Counted()
    first = {"role": "user", "content": "hi", "extra": marker}
    body = json.loads(builder.body("m", [first], None, {"max_tokens": 5}))
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi", "extra": "counted"}],
        "max_tokens": 5,
    }
    second = {"role": "assistant", "content": "ok"}
    for _ in range(3):
        body = json.loads(builder.body("m", [first, second], None, {"stream": True}))
    assert marker.calls == 1
    assert body["messages"][1] == second and body["stream"] is True


def test_fragments_of_messages_that_left_the_view_are_dropped() -> None:
    builder = RequestBuilder()
    marker = Counted()
    kept = {"role": "user", "content": marker}
    for step in range(500):  # each request: the kept message and a new summary
        builder.body("m", [kept, {"role": "user", "content": f"summary {step}"}])
    assert marker.calls == 1
    assert len(builder._fragments) <= 2 * 2 + 64  # bounded by the view, not the session


def test_a_view_that_extends_the_last_one_or_replaces_it_is_sent_whole() -> None:
    """Between compactions a view extends the last one (its join is reused); after one it
    starts anew (a shorter or different prefix): each body is the whole view."""
    builder = RequestBuilder()
    view = [{"role": "user", "content": f"m{n}"} for n in range(5)]
    for end in (1, 2, 2, 5):
        assert json.loads(builder.messages_json(view[:end])) == view[:end]
    compacted = [view[0], {"role": "user", "content": "summary"}, view[4]]
    assert json.loads(builder.messages_json(compacted)) == compacted
    assert json.loads(builder.messages_json(view[:3])) == view[:3]
    assert json.loads(builder.messages_json([])) == []
    assert json.loads(builder.messages_json(view)) == view


def test_tools_and_parameters_follow_the_messages() -> None:
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    raw = RequestBuilder().body(
        "m", [{"role": "user", "content": "é"}], tools, {"max_tokens": None, "temperature": 0}
    )
    assert "é".encode() in raw  # UTF-8, not escaped
    assert json.loads(raw) == {
        "model": "m",
        "messages": [{"role": "user", "content": "é"}],
        "tools": tools,
        "temperature": 0,
    }


def test_values_json_cannot_hold_are_sent_as_text() -> None:
    assert json.loads(dumps({"a": {1, 2} and (1,), "b": b"x"})) == {"a": [1], "b": "x"}
    # a lone surrogate is U+FFFD: strict parsers (llama.cpp's) reject a lone \ud800 escape
    assert dumps({"s": "a\ud800b"}) == '{"s":"a\ufffdb"}'.encode()
    assert json.loads(dumps({"s": "\ud83d\ude00"})) == {"s": "\U0001f600"}  # a pair stays
    assert json.loads(dumps({"n": float("nan"), "m": 1.5})) == {"n": None, "m": 1.5}
    cycle: list[Any] = [1]
    cycle.append(cycle)
    assert json.loads(dumps({"c": cycle})) == {"c": [1, "[cycle]"]}


def test_the_server_receives_the_prepared_body(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(turn("done"))
        runner = make_runner(
            tmp_path, model="m", base_url=server.base_url, api_key="k", max_output_tokens=77
        )
        events = run_events(runner, "hello")
        assert events[-1].type == "result"
        request = server.chat_requests[0]
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "m"
    assert request.body["max_tokens"] == 77
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["messages"][-1] == {"role": "user", "content": "hello"}


def test_an_unserialisable_history_entry_does_not_fail_the_request(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(turn("fine"))
        settings = type("S", (), {"api_key": "k", "base_url": server.base_url})()
        model = OpenAICompatibleModel("m", settings)
        reply = model.complete(
            [{"role": "user", "content": "hi", "meta": Counted()}], [], lambda text: None
        )
        assert reply.content == "fine"
        assert server.chat_requests[0].body["messages"][0]["meta"] == "counted"
