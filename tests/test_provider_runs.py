"""The real OpenAI-compatible provider over real HTTP to the fake server, with the runner
in-process (no process start, so these stay fast). The CLI variants are in test_server_runs.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.records import Tool
from mycode_core.testing import (
    FakeOpenAIServer,
    FakeResponse,
    completion,
    delayed,
    http_error,
    make_runner,
    raw_sse,
    run_events,
    stalled_stream,
    tools_plugin,
    turn,
)

ECHO = Tool(
    name="echo",
    description="Echo text.",
    handler=lambda arguments, context: arguments["text"],
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


def run_against(
    server: FakeOpenAIServer,
    tmp_path: Path,
    tool: Tool = ECHO,
    *,
    task: str = "do the task",
    **settings: Any,
) -> list[Any]:
    """Run ``task`` (or the default one) against ``server`` in-process with ``tool``, fast
    retries; returns the events."""
    options: dict[str, Any] = {
        "model": "m",
        "base_url": server.base_url,
        "api_key": "k",
        "retry_base_delay": 0.001,
        "retry_max_delay": 0.01,
    }
    options.update(settings)
    return run_events(make_runner(tmp_path, tools_plugin(tool), **options), task)


@pytest.fixture
def run(server: FakeOpenAIServer, tmp_path: Path) -> Any:
    """Run a task against ``server`` in-process; returns the events."""

    def go(**settings: Any) -> list[Any]:
        return run_against(server, tmp_path, **settings)

    return go


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def test_non_streaming_mode(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(
        turn(None, [{"id": "c1", "name": "echo", "arguments": {"text": "hi"}}]),
        turn("json answer", usage={"prompt_tokens": 5, "completion_tokens": 1}),
    )
    events = run(stream=False)
    assert events[-1].final_text == "json answer"
    assert _of(events, "tool_result")[0].content == "hi"
    assert all("stream" not in r.body for r in server.chat_requests)
    assert events[-1].usage == {"input_tokens": 5, "output_tokens": 1}


def test_a_json_body_answering_a_stream_request(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(
        completion("plain json reply", usage={"prompt_tokens": 9, "completion_tokens": 2})
    )
    events = run()
    assert server.chat_requests[0].body["stream"] is True
    assert events[-1].final_text == "plain json reply"
    assert events[-1].usage == {"input_tokens": 9, "output_tokens": 2}


def test_an_error_event_inside_the_stream(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(
        raw_sse(
            b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
            b'event: error\ndata: {"error":{"message":"upstream overloaded"}}\n\n'
        ),
        turn("fine now"),
    )
    events = run()
    (retry,) = _of(events, "retry")
    assert "upstream overloaded" in retry.message
    assert events[-1].final_text == "fine now"


def test_persistent_5xx_is_a_model_error(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(*[http_error(502, "bad gateway")] * 5)
    events = run(max_retries=2)
    assert len(_of(events, "retry")) == 2 and len(server.chat_requests) == 3
    assert events[-1].stop_reason == "model_error" and "bad gateway" in events[-1].error


def test_an_auth_error_is_not_retried(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(http_error(401, "Incorrect API key provided", error_type="invalid_api_key"))
    events = run()
    assert _of(events, "retry") == [] and len(server.chat_requests) == 1
    assert events[-1].stop_reason == "model_error"
    assert "Incorrect API key" in events[-1].error


def test_two_empty_replies_are_a_model_error(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(turn(""), turn(None), turn("too late"))
    events = run()
    assert events[-1].stop_reason == "model_error"
    assert len(server.chat_requests) == 2


def test_finish_reason_length_continues(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(turn("The answer is a long", finish_reason="length"), turn(" one."))
    events = run()
    sent = server.chat_requests[1].messages
    assert sent[-2] == {"role": "assistant", "content": "The answer is a long"}
    assert sent[-1]["role"] == "user"
    assert (events[-1].stop_reason, events[-1].steps) == ("completed", 1)
    assert events[-1].final_text == "The answer is a long one."


def test_an_answer_cut_twice_is_one_answer(server: FakeOpenAIServer, run: Any) -> None:
    """The pieces of an answer the reply cap cut make one answer (``final_text``, what ``-p``
    prints); an answer still cut when mycode stops asking is no completion: ``model_error``
    naming the cap, with the text so far."""
    server.enqueue(
        turn("Part 1 ", finish_reason="length"),
        turn("Part 2 ", finish_reason="length"),
        turn("The end."),
    )
    events = run()
    assert (events[-1].stop_reason, events[-1].verdict) == ("completed", "pass")
    assert events[-1].final_text == "Part 1 Part 2 The end."

    server.enqueue(*[turn(f"Part {i} ", finish_reason="length") for i in (1, 2, 3)])
    events = run(max_output_tokens=300)
    result = events[-1]
    assert (result.stop_reason, result.verdict, result.is_error) == ("model_error", "none", True)
    assert "cut by the reply cap (300 tokens) 3 times" in (result.error or "")
    assert "max_output_tokens" in (result.error or "")
    assert result.final_text == "Part 1 Part 2 Part 3 "


def test_token_budget(server: FakeOpenAIServer, run: Any) -> None:
    for i in range(4):
        server.enqueue(
            turn(
                None,
                [{"id": f"t{i}", "name": "echo", "arguments": {"text": "x"}}],
                usage={"prompt_tokens": 80, "completion_tokens": 10},
            )
        )
    events = run(max_tokens=150)
    assert (events[-1].stop_reason, events[-1].steps) == ("token_budget", 2)
    assert len(server.chat_requests) == 2


def test_the_max_output_tokens_setting_is_sent(server: FakeOpenAIServer, run: Any) -> None:
    run(max_output_tokens=321)
    assert server.chat_requests[0].body["max_tokens"] == 321


# The http.client path (issue 24) keeps the SDK's behaviour: one timeout for every blocking
# step, Retry-After in seconds or milliseconds, the same retry reasons.


def test_no_answer_within_the_timeout_is_a_timeout_retry(
    server: FakeOpenAIServer, run: Any
) -> None:
    server.enqueue(delayed(30.0, turn("far too late")), turn("on time"))
    events = run(request_timeout=0.5)
    assert [(r.reason, r.attempt) for r in _of(events, "retry")] == [("timeout", 1)]
    assert "timed out" in _of(events, "retry")[0].message
    assert (events[-1].stop_reason, events[-1].final_text) == ("completed", "on time")


def test_a_stream_that_stalls_past_the_timeout_is_retried(
    server: FakeOpenAIServer, run: Any
) -> None:
    server.enqueue(stalled_stream("Half an ans", 30.0), turn("a whole answer"))
    events = run(request_timeout=0.5)
    assert [r.reason for r in _of(events, "retry")] == ["broken_stream"]
    assert [e.content for e in _of(events, "assistant")] == ["a whole answer"]
    assert events[-1].final_text == "a whole answer"


@pytest.mark.parametrize(
    ("status", "headers", "reason", "delay"),
    [
        (429, {"retry-after-ms": "250"}, "rate_limit", 0.25),
        (503, {"Retry-After": "0.4"}, "server_error", 0.4),
        (429, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, "rate_limit", None),
    ],
)
def test_retry_after_is_honoured(
    server: FakeOpenAIServer,
    run: Any,
    status: int,
    headers: dict[str, str],
    reason: str,
    delay: float | None,
) -> None:
    server.enqueue(http_error(status, "wait", headers=headers), turn("after the wait"))
    events = run(retry_base_delay=0.001, retry_max_delay=5.0)
    (retry,) = _of(events, "retry")
    assert retry.reason == reason
    if delay is None:  # an HTTP date is not read (as before): the backoff decides
        assert retry.delay < 0.01
    else:
        assert retry.delay == delay
        gap = server.chat_requests[1].received_at - server.chat_requests[0].received_at
        assert gap >= delay
    assert events[-1].final_text == "after the wait"


def test_a_server_still_loading_its_model_is_waited_for(server: FakeOpenAIServer, run: Any) -> None:
    # llama-server answers 503 "Loading model" until a big model is in memory: more tries than
    # max_retries (4), each at the fixed 2 s pace (capped here by retry_max_delay)
    server.loading = 9
    server.enqueue(turn("loaded now"))
    events = run(retry_max_delay=0.001)
    assert events[-1].stop_reason == "completed" and events[-1].final_text == "loaded now"
    retries = _of(events, "retry")
    assert [r.reason for r in retries] == ["loading"] * 9
    assert "still loading its model" in retries[0].message


def test_a_model_that_never_loads_ends_the_run(
    server: FakeOpenAIServer, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mycode_core.runtime.recovery.LOADING_WAITS", 6)
    server.loading = 1000
    events = run(retry_max_delay=0.001)
    assert events[-1].stop_reason == "model_error"
    assert events[-1].error == "HTTP 503: Loading model (the server is still loading its model)"
    assert len(_of(events, "retry")) == 6


TGI_OVERFLOW = (
    "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. "
    "Given: 4000 `inputs` tokens and 16384 `max_new_tokens`"
)


@pytest.mark.parametrize(
    "body",
    [
        {"error": TGI_OVERFLOW, "error_type": "validation"},  # TGI: the error is a string
        b"the request exceeds the available context size (4096 tokens), try increasing it",
    ],
)
def test_a_context_error_that_is_no_openai_error_object_is_still_learned(
    server: FakeOpenAIServer, run: Any, body: Any
) -> None:
    server.enqueue(http_error(400, body=body, headers={"Content-Type": "text/plain"}), turn("ok"))
    events = run()
    assert events[-1].stop_reason == "completed"
    assert any("4096 tokens (learned" in n.message for n in _of(events, "notice"))
    assert server.chat_requests[1].body["max_tokens"] < 4096


NGINX_502 = b"""<!DOCTYPE html>
<html>
<head><title>502 Bad Gateway</title><style>body{font-family:Tahoma}</style></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>
</html>"""
CLOUDFLARE_502 = (
    b"<!DOCTYPE html><html><head><style>h1{color:red}</style>"
    b"<title>example.com | 502: Bad gateway</title></head><body>...</body></html>"
)


@pytest.mark.parametrize(
    ("page", "said"),
    [
        (NGINX_502, "Bad Gateway"),
        (CLOUDFLARE_502, "example.com | 502: Bad gateway"),
        (
            b"<html><style>p{}</style><h2>Upstream &amp; proxy down</h2></html>",
            "Upstream & proxy down",
        ),
        (b"", "Bad Gateway"),
    ],
)
def test_an_html_error_page_is_one_short_line(
    server: FakeOpenAIServer, run: Any, page: bytes, said: str
) -> None:
    headers = {"Content-Type": "text/html"}
    server.enqueue(http_error(502, body=page, headers=headers), turn("ok"))
    (retry,) = _of(run(), "retry")
    assert retry.message == f"HTTP 502: {said}"


def test_a_plain_text_error_body_is_named_in_the_message(
    server: FakeOpenAIServer, run: Any
) -> None:
    page = b"<html>\n<body>upstream   exploded</body>\n</html>"
    server.enqueue(http_error(502, body=page), http_error(404, body={"detail": "no model m"}))
    events = run()
    (retry,) = _of(events, "retry")
    assert retry.message == "HTTP 502: upstream exploded"
    assert events[-1].stop_reason == "model_error" and "no model m" in events[-1].error


@pytest.mark.parametrize("stream", [True, False])
def test_thinking_sent_apart_is_shown_never_answered_nor_sent_back(
    server: FakeOpenAIServer, run: Any, stream: bool
) -> None:
    """llama.cpp, vLLM and DeepSeek send a reasoning model's thinking as ``reasoning_content``:
    it streams as ``reasoning_delta`` events, is no part of the answer, and the next request
    does not carry it."""
    server.enqueue(
        turn(
            None,
            [{"id": "c1", "name": "echo", "arguments": {"text": "hi"}}],
            reasoning="The user wants an echo. I will call echo.",
        ),
        turn("done", reasoning="It echoed hi."),
    )
    events = run(stream=stream)
    thoughts = "".join(e.text for e in _of(events, "reasoning_delta"))
    assert thoughts == "The user wants an echo. I will call echo.It echoed hi."
    assert "".join(e.text for e in _of(events, "text_delta")) == "done"
    assert events[-1].final_text == "done"
    second = server.chat_requests[1].messages
    assert "I will call echo" not in str(second)
    shown = [e.type for e in events if e.type in ("reasoning_delta", "text_delta")]
    assert shown[-1] == "text_delta"  # the thinking comes before its answer, streamed or not


@pytest.mark.parametrize("stream", [True, False])
def test_a_leading_think_block_in_the_content_is_thinking_too(
    server: FakeOpenAIServer, run: Any, stream: bool
) -> None:
    """llama-server ``--reasoning-format none`` leaves the thinking inline, as a leading
    ``<think>…</think>`` of ``content`` (the tags split across chunks): it goes where
    ``reasoning_content`` goes — shown as ``reasoning_delta``, neither answered nor sent
    back — while a tag later in an answer stays text."""
    server.enqueue(
        turn(
            "<think>\nThe user wants an echo.\n</think>\n\n",
            [{"id": "c1", "name": "echo", "arguments": {"text": "hi"}}],
            chunk_size=3,
        ),
        turn("<think>It echoed hi.</think>\n\nEchoed: use <think> tags.", chunk_size=2),
    )
    events = run(stream=stream)
    thoughts = "".join(e.text for e in _of(events, "reasoning_delta"))
    assert thoughts == "\nThe user wants an echo.\nIt echoed hi."
    assert "".join(e.text for e in _of(events, "text_delta")) == "Echoed: use <think> tags."
    assert events[-1].final_text == "Echoed: use <think> tags."
    assert "The user wants" not in str(server.chat_requests[1].messages)
    assert _of(events, "assistant")[0].content in (None, "")


def test_a_think_block_cut_by_the_reply_cap_is_thinking_not_an_answer(
    server: FakeOpenAIServer, run: Any
) -> None:
    """An unterminated leading ``<think>`` (the reply cap hit mid-thought) is thinking: the
    model is told it was cut while thinking, and nothing of it becomes the answer."""
    server.enqueue(turn("<think>Let me think at length", finish_reason="length"), turn("done"))
    events = run()
    assert "".join(e.text for e in _of(events, "text_delta")) == "done"
    assert events[-1].stop_reason == "completed" and events[-1].final_text == "done"
    (guidance,) = [g.message for g in _of(events, "guidance")]
    assert "while you were still thinking" in guidance


def test_llama_server_without_jinja_fails_at_once_naming_the_flag(tmp_path: Path) -> None:
    """``llama-server --no-jinja`` answers every request with tools with a 500
    ``tools param requires --jinja flag``: retrying cannot help, so the run ends at once with
    ``model_error`` and says to restart the server with ``--jinja``."""
    with FakeOpenAIServer(jinja=False) as server:
        events = run_against(server, tmp_path)
    assert _of(events, "retry") == [] and len(server.chat_requests) == 1
    assert events[-1].stop_reason == "model_error"
    assert "tools param requires --jinja flag" in events[-1].error
    assert "restart llama-server with --jinja" in events[-1].error


def test_an_overflow_naming_the_known_window_is_not_called_unnamed(tmp_path: Path) -> None:
    """llama-server names its window in every overflow error. When that is the window the run
    already knows (configured, or found at ``/props``) and the server counts the prompt far
    bigger than estimated, the budget is halved — and the notice says the limit was named."""
    from mycode_core.testing.server import LLAMA_CPP_OVERFLOW

    server = FakeOpenAIServer(
        context_window=4_000, overflow_message=LLAMA_CPP_OVERFLOW, token_factor=3.0
    )
    with server:
        events = run_against(server, tmp_path, task="x " * 1200, context_window=4_000)
    halved = [n.message for n in _of(events, "notice") if "halving" in n.message]
    assert halved and "without naming its limit" not in halved[0]
    assert "window of 4000 tokens" in halved[0]


def test_thinking_cut_by_the_reply_cap_is_no_empty_reply(
    server: FakeOpenAIServer, run: Any
) -> None:
    """A reasoning model on llama-server that spends the whole ``max_tokens`` thinking sends
    ``reasoning_content`` only and ``finish_reason: length``: the model is told its reply was
    cut while thinking (not that it was empty), and when it never answers the error names
    the reply cap."""
    thinking = turn(None, reasoning="Let me think about this at length", finish_reason="length")
    server.enqueue(thinking, thinking, turn("done"))
    events = run()
    assert events[-1].stop_reason == "completed" and events[-1].final_text == "done"
    guidance = [g.message for g in _of(events, "guidance")]
    assert len(guidance) == 2 and all("while you were still thinking" in g for g in guidance)

    server.enqueue(thinking, thinking, thinking, turn("too late"))
    events = run()
    assert events[-1].stop_reason == "model_error"
    assert "thinking filled the reply cap" in (events[-1].error or "")
    assert "max_output_tokens" in (events[-1].error or "")


def test_a_chat_template_that_drops_the_tools_is_no_completion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llama-server --chat-template chatml`` drops the tools a request offers (its ``/props``:
    ``chat_template_caps.supports_tools: false``) and the model writes its calls as text:
    that answer is no completion but ``model_error`` saying what to do."""
    from mycode_core.runtime import viewing

    monkeypatch.setattr(viewing, "DISCOVERY_SETTLE", 60.0)  # the join ends with discovery
    markup = '<tool_call>{"name": "echo", "arguments": {"text": "hi"}}</tool_call>'
    props = {"default_generation_settings": {"n_ctx": 8192}}
    llama = {"owned_by": "llamacpp", "meta": {"n_ctx_train": 8192}}
    caps = {"chat_template_caps": {"supports_tools": False}}
    with FakeOpenAIServer([turn(markup)], props={**props, **caps}, model_metadata=llama) as server:
        result = run_against(server, tmp_path)[-1]
    assert (result.stop_reason, result.verdict) == ("model_error", "none")
    assert result.final_text == markup
    assert "chat template takes no tools" in (result.error or "")
    assert "--jinja" in (result.error or "")
    with FakeOpenAIServer([turn("hi")], props=props, model_metadata=llama) as server:
        assert run_against(server, tmp_path)[-1].stop_reason == "completed"


def test_an_image_sent_to_a_llama_server_without_mmproj_fails_at_once(tmp_path: Path) -> None:
    """With ``images = true`` and a ``llama-server`` started without ``--mmproj``, the request
    carrying the image is a 500 that no retry changes: the run ends at once, saying what to
    do."""
    from mycode_core.records import ToolResult

    shot = Tool(
        name="shot",
        description="Take a screenshot.",
        handler=lambda arguments, context: ToolResult(
            content=[
                {"type": "text", "text": "a screenshot"},
                {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="},
            ]
        ),
    )
    with FakeOpenAIServer(
        [turn(None, [{"id": "c1", "name": "shot", "arguments": {}}])], vision=False
    ) as server:
        events = run_against(server, tmp_path, shot, images=True)
    assert _of(events, "retry") == [] and len(server.chat_requests) == 2
    assert events[-1].stop_reason == "model_error"
    assert "image input is not supported" in (events[-1].error or "")
    assert "--mmproj" in (events[-1].error or "") and "images = false" in (events[-1].error or "")


PARTS = [
    {"type": "thinking", "thinking": [{"type": "text", "text": "Hmm."}]},
    {"type": "text", "text": "Part A. "},
    {"type": "image_url", "image_url": {"url": "data:,"}},
    {"type": "text", "text": "Part B."},
]


@pytest.mark.parametrize("stream", [True, False])
def test_content_sent_as_a_list_of_parts_is_joined(
    server: FakeOpenAIServer, run: Any, stream: bool
) -> None:
    # Mistral's reasoning models and some proxies send the content as parts, streamed or not
    if stream:
        deltas = [{"content": PARTS[:2]}, {"content": PARTS[2:]}, {}]
        server.enqueue(
            raw_sse(
                "".join(
                    f"data: {json.dumps({'choices': [{'index': 0, 'delta': d}]})}\n\n"
                    for d in deltas
                )
                + 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
            )
        )
    else:
        message = {"role": "assistant", "content": PARTS}
        body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        server.enqueue(
            FakeResponse(
                kind="body",
                headers={"Content-Type": "application/json"},
                body=json.dumps(body).encode(),
            )
        )
    events = run(stream=stream)
    assert (events[-1].stop_reason, events[-1].final_text) == ("completed", "Part A. Part B.")
    assert "".join(e.text for e in _of(events, "reasoning_delta")) == "Hmm."


def test_a_reply_stopped_by_the_content_filter_is_no_verified_pass(
    server: FakeOpenAIServer, run: Any
) -> None:
    server.enqueue(turn("Here is the partial", finish_reason="content_filter"))
    events = run(completion_gate={"policy": "off"})  # else a plain pass
    (notice,) = [n for n in _of(events, "notice") if "content filter" in n.message]
    assert notice.level == "warning"
    assert (events[-1].stop_reason, events[-1].verdict) == ("completed", "unverified")


def test_a_tool_call_cut_by_the_output_limit_is_named_so(
    server: FakeOpenAIServer, run: Any
) -> None:
    cut = [{"id": "c1", "name": "echo", "arguments": '{"text": "a long te'}]
    server.enqueue(turn(None, cut, finish_reason="length"))
    (result,) = _of(run(), "tool_result")
    assert result.is_error and result.content.startswith(
        "The output limit cut off your call of echo"
    )
    assert "max_output_tokens" in result.content and "Invalid JSON" not in result.content


def test_a_server_that_stops_mid_run_gets_the_normal_retries(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # a refused local connection fails at once only before the server ever answered
    def stop_the_server(arguments: Any, context: Any) -> str:
        server.stop()
        return "stopped"

    stopper = Tool(
        name="stop", description="Stop.", handler=stop_the_server, input_schema={"type": "object"}
    )
    server.enqueue(turn(None, [{"id": "c1", "name": "stop", "arguments": {}}]))
    events = run_against(server, tmp_path, stopper, max_retries=2)
    assert [r.reason for r in _of(events, "retry")] == ["connection_error"] * 2
    assert events[-1].stop_reason == "model_error" and "Connection refused" in events[-1].error


def test_a_retry_after_beyond_the_cap_is_named(server: FakeOpenAIServer, run: Any) -> None:
    server.enqueue(http_error(429, "slow down", headers={"Retry-After": "600"}), turn("ok"))
    (retry,) = _of(run(retry_max_delay=0.01), "retry")
    assert retry.delay == 0.01
    assert retry.message == (
        "the server asked to wait 600s, capped by retry_max_delay (0.01s): HTTP 429: slow down"
    )
