"""End to end: ``mycode -p`` as a subprocess against a local fake OpenAI-compatible server.

Variants that only exercise provider + loop run in-process (the real OpenAI-compatible provider
over real HTTP, without a process start) in ``test_provider_runs.py``, to keep the suite fast.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from mycode_core.testing import (
    FakeOpenAIServer,
    cut_stream,
    delayed,
    dropped_connection,
    http_error,
    interrupt_cli,
    raw_sse,
    sse_stream,
    start_cli,
    tool_pairing_problems,
    turn,
)
from mycode_core.testing.server import LLAMA_CPP_OVERFLOW

USAGE = {"prompt_tokens": 100, "completion_tokens": 20}


def _tool_results(run: Any) -> list[dict[str, Any]]:
    return run.of_type("tool_result")


def _set_config(home: Path, text: str) -> None:
    """Add ``text`` (TOML lines) to the home config, replacing keys already set."""
    path = home / "config.toml"
    keys = {line.split("=")[0].strip() for line in text.splitlines() if "=" in line}
    kept = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.split("=")[0].strip() not in keys
    ]
    path.write_text("\n".join([*kept, text]), encoding="utf-8")


def test_a_multi_step_tool_run(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path
) -> None:
    server.enqueue(
        turn(
            "I'll write the note.",
            [
                {
                    "id": "c1",
                    "name": "write_note",
                    "arguments": {"path": "notes/a.txt", "content": "hello"},
                }
            ],
            usage=USAGE,
        ),
        turn(
            None,
            [
                {"id": "c2", "name": "read_note", "arguments": {"path": "notes/a.txt"}},
                {"id": "c3", "name": "sh", "arguments": {"command": "cat notes/a.txt"}},
            ],
            usage=USAGE,
        ),
        turn("The note says hello.", usage=USAGE),
    )
    run = cli(["-p", "write a note", *server_args])
    assert run.rc == 0, run.stderr
    assert (workspace / "notes" / "a.txt").read_text() == "hello"
    assert len(run.events) == len(run.stdout.splitlines())  # one JSON event per line
    assert [e["type"] for e in run.events][0] == "system"
    assert run.events[-1]["type"] == "result"
    result = run.result
    assert result is not None
    assert (result["stop_reason"], result["verdict"], result["steps"]) == ("completed", "pass", 3)
    assert result["final_text"] == "The note says hello."
    assert result["usage"] == {"input_tokens": 300, "output_tokens": 60}
    results = {r["id"]: r for r in _tool_results(run)}
    assert results["c2"]["content"] == "hello" and results["c3"]["content"] == "hello"
    assert [c["name"] for c in run.of_type("tool_call")] == ["write_note", "read_note", "sh"]
    assert "".join(d["text"] for d in run.of_type("text_delta")).startswith("I'll write")

    requests = server.chat_requests
    assert len(requests) == 3
    first = requests[0]
    assert first.headers["authorization"] == "Bearer test-key"
    assert first.body["model"] == "m" and first.body["stream"] is True
    assert first.body["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in first.body["tools"]} >= {"write_note", "read_note"}
    assert first.messages[0]["role"] == "system" and first.messages[1] == {
        "role": "user",
        "content": "write a note",
    }
    last = requests[2].messages
    assert [m["tool_call_id"] for m in last if m["role"] == "tool"] == ["c1", "c2", "c3"]
    assert tool_pairing_problems(last) == []


def test_a_bug_fix_with_the_builtin_tools(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text(
        "import unittest\nfrom calc import add\n\n\n"
        "class T(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n"
    )
    test_command = f"{sys.executable} -m unittest -q"
    server.enqueue(
        turn(None, [{"id": "r", "name": "read_file", "arguments": {"path": "calc.py"}}]),
        turn(
            None,
            [
                {
                    "id": "e",
                    "name": "edit_file",
                    "arguments": {
                        "path": "calc.py",
                        "old_string": "return a - b",
                        "new_string": "return a + b",
                    },
                }
            ],
        ),
        turn(None, [{"id": "t", "name": "run_command", "arguments": {"command": test_command}}]),
        turn("Fixed add(); the tests pass."),
    )
    # trusted: without bubblewrap an untrusted workspace's tests would need approval
    run = cli(
        ["-p", "fix add", "--trust", *server_args], env={"MYCODE_LOAD_PLUGINS": "builtin_tools"}
    )
    assert run.rc == 0, run.stderr
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    results = {r["id"]: r for r in _tool_results(run)}
    assert not any(r["is_error"] for r in results.values()), results
    assert "return a - b" in json.dumps(results["r"]["content"])
    assert results["t"]["metadata"].get("exit_code") == 0
    observations = [o["observation"] for o in run.of_type("observation")]
    assert observations[-1]["validation"]["passed"] is True
    assert run.result is not None and run.result["stop_reason"] == "completed"


def test_429_with_retry_after(run_task: Any, server: FakeOpenAIServer, home: Path) -> None:
    _set_config(home, "retry_max_delay = 5.0\n")
    run = run_task(
        http_error(
            429,
            "Rate limit reached",
            headers={"Retry-After": "0.3"},
            error_type="rate_limit_exceeded",
        ),
        turn("after the wait"),
    )
    assert run.rc == 0, run.stderr
    (retry,) = run.of_type("retry")
    assert (retry["reason"], retry["attempt"], retry["delay"]) == ("rate_limit", 1, 0.3)
    gap = server.chat_requests[1].received_at - server.chat_requests[0].received_at
    assert gap >= 0.3
    assert run.result is not None and run.result["final_text"] == "after the wait"
    assert run.result["steps"] == 1


def test_500_is_retried(run_task: Any) -> None:
    run = run_task(
        http_error(500, "internal error"), http_error(503, "overloaded"), turn("recovered")
    )
    assert run.rc == 0, run.stderr
    assert [r["reason"] for r in run.of_type("retry")] == ["server_error", "server_error"]
    assert run.result is not None and run.result["final_text"] == "recovered"


# what llama-server sends when the model's output breaks the grammar of its tool calls: the
# model's text quoted in the message, newlines and all (mid-stream, or as a 500 without one)
GRAMMAR_ERROR = {
    "code": 500,
    "message": "got exception: Unexpected empty grammar stack after accepting piece: "
    '\n{"name": "read_file", "arguments": {"path": \n (8000)',
    "type": "server_error",
}


def test_a_tool_call_the_server_cannot_parse_is_one_line_that_says_so(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": ""}}]}
    in_stream = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps({'error': GRAMMAR_ERROR})}\n\n"
    server.enqueue(raw_sse(in_stream), *[http_error(500, body={"error": GRAMMAR_ERROR})] * 4)
    run = cli(["-p", "task", *[a for a in server_args if a != "stream-json"], "text"])
    assert run.rc == 1 and len(server.chat_requests) == 5  # retried, within max_retries
    error = run.stderr.strip().splitlines()[-1]
    assert error.startswith("HTTP 500: got exception: Unexpected empty grammar stack"), run.stderr
    assert error.endswith("(the server could not parse the model's reply as a tool call)")
    retries = [line for line in run.stderr.splitlines() if line.startswith("retry ")]
    assert len(retries) == 4
    server.enqueue(raw_sse(in_stream), turn("parsed this time"))
    run = cli(["-p", "task", *server_args])
    assert run.rc == 0 and run.result is not None, run.stderr
    (retry,) = run.of_type("retry")
    assert retry["message"].startswith("stream error: got exception: Unexpected empty grammar")
    assert "\n" not in retry["message"] and retry["message"].endswith("as a tool call)")


def test_a_dropped_connection_is_retried(run_task: Any) -> None:
    run = run_task(dropped_connection(), turn("back again"))
    assert run.rc == 0, run.stderr
    assert [r["reason"] for r in run.of_type("retry")] == ["connection_error"]
    assert run.result is not None and run.result["final_text"] == "back again"


def test_a_cut_stream_is_retried(run_task: Any) -> None:
    run = run_task(cut_stream("This answer will be cu"), turn("complete answer"))
    assert run.rc == 0, run.stderr
    assert [r["reason"] for r in run.of_type("retry")] == ["broken_stream"]
    assert run.result is not None and run.result["final_text"] == "complete answer"
    (assistant,) = run.of_type("assistant")
    assert assistant["content"] == "complete answer"


def test_a_context_length_error_compacts_and_retries(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _set_config(home, "context_window = 6000\nmax_output_tokens = 1000\n")
    big = "lorem ipsum " * 250
    for i in range(4):
        server.enqueue(turn(None, [{"id": f"c{i}", "name": "echo", "arguments": {"text": big}}]))
    server.enqueue(
        http_error(
            400,
            "This model's maximum context length is 4096 tokens.",
            error_type="invalid_request_error",
            code="context_length_exceeded",
        ),
        turn("fits now"),
    )
    server.side_responder = lambda body: None if body.get("tools") else turn("SUMMARY")
    run = cli(["-p", "task", *server_args])
    assert run.rc == 0, run.stderr
    assert run.of_type("retry") == []
    compaction = run.of_type("compaction")[-1]
    assert compaction["reason"] == "reactive"
    assert (compaction["context_window"], compaction["window_source"]) == (4096, "learned")
    main = [r for r in server.chat_requests if r.body.get("tools")]
    before, after = main[-2].messages, main[-1].messages
    assert server.prompt_tokens(main[-1].body) + 1000 <= 4096  # fits the learned window
    assert after[0] == before[0]  # the system prompt survives, and the task with it
    assert "task" in json.dumps(after[1:])
    assert tool_pairing_problems(after) == []
    assert run.result is not None and run.result["final_text"] == "fits now"


def test_a_persistent_context_length_error_is_context_overflow(run_task: Any) -> None:
    run = run_task(
        *[
            http_error(
                400,
                "prompt is too long: 300000 tokens > 200000 maximum",
                error_type="invalid_request_error",
            )
        ]
        * 4
    )
    assert run.rc == 1
    assert run.result is not None and run.result["stop_reason"] == "context_overflow"
    assert run.of_type("compaction") and run.of_type("retry") == []


def test_a_window_the_tool_schemas_alone_fill_names_them(
    cli: Any, server_args: list[str], workspace: Path
) -> None:
    """``llama-server -c 1024`` and every default plugin: their ~1,300 tokens of tool schemas
    leave a small window no room at all. The error named the compaction summary's pinned
    context and a budget of 64 tokens, and said to shorten the prompt; it names the schemas."""
    with FakeOpenAIServer(context_window=1024, overflow_message=LLAMA_CPP_OVERFLOW) as small:
        args = [small.base_url if a.startswith("http") else a for a in server_args]
        run = cli(["-p", "hi", *args], {"MYCODE_LOAD_PLUGINS": None})
        assert small.overflows == 1  # asked once (the window was not known yet), then no more
    assert run.rc == 1 and run.result is not None, run.stderr
    error = run.result["error"]
    assert run.result["stop_reason"] == "context_overflow"
    assert error.startswith("the tool schemas (~") and "window 1024, learned" in error
    assert "llama-server -c" in error and "MYCODE_DISABLE_PLUGINS" in error
    assert "pinned context" not in error and "Traceback" not in run.stderr


def test_an_empty_reply_gets_one_nudge(run_task: Any, server: FakeOpenAIServer) -> None:
    run = run_task(turn(""), turn("now with words"))
    assert run.rc == 0, run.stderr
    (guidance,) = run.of_type("guidance")
    assert guidance["source"] == "runtime"
    assert server.chat_requests[1].messages[-1]["content"].endswith(guidance["message"])
    assert run.result is not None and run.result["final_text"] == "now with words"


def test_stream_options_rejected_is_retried_without(cli: Any, server_args: list[str]) -> None:
    with FakeOpenAIServer(
        [turn(None, [{"id": "c1", "name": "echo", "arguments": {"text": "x"}}]), turn("ok")],
        reject_stream_options=True,
    ) as strict:
        args = [a if a != server_args[3] else strict.base_url for a in server_args]
        run = cli(["-p", "task", *args])
    assert run.rc == 0, run.stderr
    assert run.of_type("retry") == []
    bodies = [r.body for r in strict.chat_requests]
    assert "stream_options" in bodies[0]
    assert [("stream_options" in b) for b in bodies[1:]] == [False, False]  # never again
    assert run.result is not None and run.result["final_text"] == "ok"


def test_tool_calls_without_id_or_index(run_task: Any, server: FakeOpenAIServer) -> None:
    run = run_task(
        sse_stream(
            None,
            [
                {"name": "echo", "arguments": {"text": "one"}},
                {"name": "echo", "arguments": {"text": "two"}},
            ],
        ),
        sse_stream(
            None, [{"name": "echo", "arguments": {"text": "three"}, "id": "x9"}], omit_index=True
        ),
        turn("done"),
    )
    assert run.rc == 0, run.stderr
    calls = run.of_type("tool_call")
    assert [c["arguments"] for c in calls] == [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    ids = [c["id"] for c in calls]
    assert all(ids) and len(set(ids)) == 3 and ids[2] == "x9"
    assert [r["content"] for r in _tool_results(run)] == ["one", "two", "three"]
    assert tool_pairing_problems(server.chat_requests[-1].messages) == []


def test_bad_arguments_and_unknown_tools_are_error_results(
    run_task: Any, server: FakeOpenAIServer
) -> None:
    run = run_task(
        turn(
            None,
            [
                {"id": "a", "name": "echo", "arguments": '{"text": "unterminated'},
                {"id": "b", "name": "no_such_tool", "arguments": {}},
                {"id": "c", "name": "echo", "arguments": {"wrong": 1}},
                {"id": "d", "name": "crash", "arguments": {}},
            ],
        ),
        turn("handled"),
    )
    assert run.rc == 0, run.stderr
    results = {r["id"]: r for r in _tool_results(run)}
    assert all(results[i]["is_error"] for i in "abcd")
    assert "JSON" in results["a"]["content"]
    assert "no_such_tool" in results["b"]["content"]
    assert "text" in results["c"]["content"]
    assert "blew up" in results["d"]["content"]
    sent = server.chat_requests[1].messages
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["a", "b", "c", "d"]


def test_max_steps_checkpoint_then_continue(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    for i in range(3):
        server.enqueue(
            turn(None, [{"id": f"s{i}", "name": "echo", "arguments": {"text": f"finding {i}"}}])
        )
    server.enqueue(turn("## Remaining actions\nCHECKPOINT-NOTES: compare the findings"))
    run = cli(["-p", "investigate", *server_args, "--max-steps", "3"])
    assert run.rc == 1
    assert run.result is not None
    assert (run.result["stop_reason"], run.result["steps"]) == ("max_steps", 3)
    (checkpoint,) = run.of_type("checkpoint")
    assert "CHECKPOINT-NOTES" in checkpoint["text"]
    assert "tools" not in server.chat_requests[-1].body  # the checkpoint call offers no tools
    session_id = run.result["session_id"]

    server.enqueue(turn("continued and finished"))
    resumed = cli(["-p", "--continue", *server_args])
    assert resumed.rc == 0, resumed.stderr
    assert resumed.events[0]["resumed_from"] == session_id
    sent = server.chat_requests[-1].messages
    joined = json.dumps(sent)
    assert "CHECKPOINT-NOTES" in joined and "investigate" in joined
    assert not any(m["role"] == "tool" for m in sent)  # restarted from the checkpoint


def test_output_formats(cli: Any, server: FakeOpenAIServer, server_args: list[str]) -> None:
    base = [a for a in server_args if a not in ("--output-format", "stream-json")]
    server.enqueue(turn("final words"))
    as_json = cli(["-p", "task", *base, "--output-format", "json"])
    assert as_json.rc == 0
    (only,) = [json.loads(line) for line in as_json.stdout.splitlines() if line.strip()]
    assert only["type"] == "result" and only["final_text"] == "final words"
    server.enqueue(turn("plain words"))
    as_text = cli(["-p", "task", *base])
    assert as_text.rc == 0 and as_text.stdout.strip() == "plain words"


def test_inline_think_blocks_are_thinking_in_stream_json(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    """``mycode -p --output-format stream-json`` against a server that leaves a reasoning
    model's thinking inline (llama-server ``--reasoning-format none``), streamed and not."""
    for stream in ("true", "false"):
        _set_config(home, f"stream = {stream}")
        server.enqueue(turn("<think>2 + 2 is 4</think>\n\nThe answer is 4.", chunk_size=3))
        run = cli(["-p", "what is 2 + 2?", *server_args])
        assert run.rc == 0, run.stderr
        assert "".join(e["text"] for e in run.of_type("reasoning_delta")) == "2 + 2 is 4"
        assert "".join(e["text"] for e in run.of_type("text_delta")) == "The answer is 4."
        assert run.of_type("result")[0]["final_text"] == "The answer is 4."
    assert ["stream" in r.body for r in server.chat_requests] == [True, False]


def test_the_prompt_can_come_from_stdin(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    run = cli(["-p", *server_args], input="task from stdin\n")
    assert run.rc == 0
    assert server.chat_requests[0].messages[1]["content"] == "task from stdin"


def test_interrupt_exits_130(
    server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path
) -> None:
    server.enqueue(delayed(300.0, turn("too slow")))
    process = start_cli(["-p", "task", *server_args], workspace, home, {"MYCODE_LOAD_PLUGINS": ""})

    def waiting_for_the_model() -> bool:
        asked = server.wait_for_requests(1, timeout=20)
        time.sleep(0.2)
        return asked

    # the model call is cut at once, not when the slow server finally answers (300 s):
    # a generous limit that only catches a run waiting for the server
    run = interrupt_cli(process, ready=waiting_for_the_model, timeout=120)
    assert run.rc == 130, run.stderr
    events = run.events
    assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "interrupted"


def test_ctrl_c_while_an_event_is_being_written_still_ends_the_turn(
    server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path
) -> None:
    # Nobody reads stdout at first, so the main thread is stuck writing the long ``user``
    # event when Ctrl-C comes; the turn must still be cancelled (not a KeyboardInterrupt out
    # of the write that leaves the model call waiting for the slow server).
    server.enqueue(delayed(300.0, turn("too slow")))
    piped = home.parent / "piped.log"
    piped.write_text("log line\n" * 30_000, encoding="utf-8")  # ~270 KB: more than a pipe holds
    with piped.open("rb") as stdin:
        process = start_cli(
            ["-p", "why?", *server_args],
            workspace,
            home,
            # unbuffered: stdout's bytes go straight to the pipe, so a write cut by the signal
            # returns short, and the rest of the line must still be written
            {"MYCODE_LOAD_PLUGINS": "", "PYTHONUNBUFFERED": "1"},
            stdin=stdin,
            text=False,
        )
    run = interrupt_cli(process, ready=lambda: server.wait_for_requests(1, 60), timeout=120)
    assert run.rc == 130, run.stderr
    events = run.events
    assert any(e["type"] == "user" and "log line" in e["content"] for e in events)
    assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "interrupted"
