"""``mycode_core.testing`` itself: the fake server speaks what it promises."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mycode_core.providers.sse import accumulate_sse
from mycode_core.records import Tool
from mycode_core.testing import (
    FakeOpenAIServer,
    call_tool,
    delayed,
    http_error,
    installed_plugin,
    make_context,
    requires_plugin,
    stream_chunks,
    tool_pairing_problems,
    turn,
    write_script,
)


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_an_empty_queue_answers_a_final_text_in_either_mode() -> None:
    with FakeOpenAIServer(final_text="the end") as server:
        status, headers, body = _post(server.base_url, {"model": "m", "messages": []})
        assert status == 200 and "json" in headers["Content-Type"]
        assert json.loads(body)["choices"][0]["message"]["content"] == "the end"
        status, headers, body = _post(server.base_url, {"model": "m", "stream": True})
        assert headers["Content-Type"] == "text/event-stream"
        reply = accumulate_sse(body.decode().split("\n"), lambda _t: None)
        assert reply.content == "the end" and reply.finish_reason == "stop"
        assert len(server.chat_requests) == 2
        assert server.chat_requests[0].headers["authorization"] == "Bearer k"
        assert server.chat_requests[1].body == {"model": "m", "stream": True}


def test_queued_responses_come_in_order_with_status_and_headers() -> None:
    with FakeOpenAIServer(
        [http_error(429, "slow", headers={"Retry-After": "7"}), delayed(0.2, turn("late"))]
    ) as server:
        status, headers, body = _post(server.base_url, {})
        assert status == 429 and headers["Retry-After"] == "7"
        assert json.loads(body)["error"]["message"] == "slow"
        started = time.monotonic()
        status, _, body = _post(server.base_url, {})
        assert time.monotonic() - started >= 0.2
        assert json.loads(body)["choices"][0]["message"]["content"] == "late"
        assert server.pending == 0
        assert not server.wait_for_requests(3, timeout=0.1)


def test_stream_chunks_round_trip_through_the_parser() -> None:
    spec = turn(
        "some text",
        [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": "{}", "id": "x"}],
        usage={"prompt_tokens": 3, "completion_tokens": 4},
    ).turn
    assert spec is not None
    lines = b"".join(stream_chunks(spec)).decode().split("\n")
    reply = accumulate_sse(lines, lambda _t: None)
    assert reply.content == "some text" and reply.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments), c.id) for c in reply.tool_calls] == [
        ("f", {"a": 1}, None),
        ("g", {}, "x"),
    ]
    assert reply.usage == {"input_tokens": 3, "output_tokens": 4}


def test_write_script_and_call_tool(tmp_path: Path) -> None:
    model = write_script(tmp_path / "deep" / "s.json", [{"content": "hi"}])
    assert model == f"scripted:{tmp_path / 'deep' / 's.json'}"
    assert json.loads((tmp_path / "deep" / "s.json").read_text()) == [{"content": "hi"}]
    tool = Tool(
        name="t",
        description="d",
        handler=lambda a, c: f"n={a['n']}",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )
    context = make_context(tmp_path)
    assert context.workspace.is_dir() and context.home.is_dir()
    assert call_tool(tool, {"n": 2}, context).content == "n=2"
    bad = call_tool(tool, {"n": "two"}, context)
    assert bad.is_error and "n" in bad.content


def test_tool_pairing_problems_finds_orphans() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    answer = {"role": "tool", "tool_call_id": "a", "content": "ok"}
    assert tool_pairing_problems([call, answer]) == []
    assert tool_pairing_problems([answer]) != []
    assert tool_pairing_problems([call, {"role": "user", "content": "x"}]) != []


def test_the_testing_module_stays_light() -> None:
    import subprocess

    code = (
        "import sys, mycode_core.testing; "
        "print(sorted(m for m in ('openai', 'mcp', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_fake_server_answers_models() -> None:
    with FakeOpenAIServer(model="abc") as server:
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
            assert json.loads(response.read())["data"][0]["id"] == "abc"
        assert server.requests[0].method == "GET" and server.chat_requests == []


def test_installed_plugin_loads_by_entry_point_or_skips_naming_it() -> None:
    tools = installed_plugin("builtin_tools")
    assert hasattr(tools, "register_tools")
    with pytest.raises(pytest.skip.Exception, match="'no-such-plugin'"):
        installed_plugin("no-such-plugin")


def test_requires_plugin_skips_only_when_the_plugin_is_missing() -> None:
    present, missing = requires_plugin("builtin_tools"), requires_plugin("no-such-plugin")
    assert present.name == missing.name == "skipif"
    assert present.args == (False,)
    assert missing.args == (True,) and "'no-such-plugin'" in missing.kwargs["reason"]


def _raw_chat_request(port: int) -> socket.socket:
    """A chat-completions request sent by hand, so the test decides when the client hangs up."""
    client = socket.create_connection(("127.0.0.1", port))
    body = json.dumps({"model": "m", "messages": []}).encode()
    client.sendall(
        b"POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return client


def _join_request_handlers() -> None:
    for thread in threading.enumerate():
        if "process_request_thread" in thread.name:
            thread.join(timeout=5)


def test_an_answer_still_waiting_when_the_server_stops_writes_nothing_anywhere(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A test that cancels a slow request must not leave a traceback in a later test's
    output (CI once saw one inside a ``CliRunner`` result)."""
    server = FakeOpenAIServer([delayed(0.5, turn("late"))]).start()
    client = _raw_chat_request(server.port)
    deadline = time.monotonic() + 30
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    client.close()  # the client hangs up while the answer waits
    swapped = io.StringIO()
    with contextlib.redirect_stderr(swapped):
        server.stop()
        _join_request_handlers()
    assert swapped.getvalue() == ""
    assert server.errors == []
    assert "Traceback" not in capfd.readouterr().err


def test_a_client_hanging_up_mid_answer_is_not_an_error(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer([turn("x" * 2_000_000)]) as server:
        client = _raw_chat_request(server.port)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        client.recv(10)
        swapped = io.StringIO()
        with contextlib.redirect_stderr(swapped):
            client.close()  # a reset: the 2 MB answer cannot all have been written yet
            _join_request_handlers()
            urllib.request.urlopen(server.base_url + "/models", timeout=10).read()
        assert swapped.getvalue() == ""
        assert server.errors == []
    assert "Traceback" not in capfd.readouterr().err


def test_cli_args_point_a_run_at_the_server(tmp_path: Path) -> None:
    from mycode_core.testing import run_cli

    with FakeOpenAIServer([turn("served")]) as server:
        flags = ["--model", "m", "--base-url", server.base_url, "--api-key", "x"]
        assert server.cli_args() == flags
        assert server.cli_args("hi", model="other")[:4] == ["-p", "hi", "--model", "other"]
        args = server.cli_args("hi", output_format="stream-json")
        assert args == ["-p", "hi", *flags, "--output-format", "stream-json"]
        run = run_cli(args, tmp_path, tmp_path / "home", {"MYCODE_LOAD_PLUGINS": ""})
        assert run.rc == 0, run.stderr
        assert len(server.chat_requests) == 1
    assert run.result is not None and run.result["final_text"] == "served"


def test_start_cli_runs_mycode_with_pipes_and_its_own_home(tmp_path: Path) -> None:
    from mycode_core.testing import start_cli

    process = start_cli(["--version"], tmp_path, tmp_path / "home")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "mycode" in out.lower() and isinstance(out, str)


def test_host_helpers_see_live_and_finished_processes() -> None:
    import os
    import subprocess

    from mycode_core.testing.host import process_alive, wait_until

    assert process_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert wait_until(lambda: child.poll() is not None, 60)
    assert not process_alive(child.pid)  # reaped: gone from /proc
    flips = iter([False, False, True])
    assert wait_until(lambda: next(flips), 5, poll=0.01)
    assert not wait_until(lambda: False, 0.1)
