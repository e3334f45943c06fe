"""Ctrl-C during a child stops the child too; ``--resume`` then leaves no dangling call."""

from __future__ import annotations

import json
from pathlib import Path

from sa_helpers import answer, calls, delegate, requests_for, run, workspace

from mycode_core.testing import FakeOpenAIServer, delayed, tool_pairing_problems
from mycode_core.testing.cli import interrupt_cli, start_cli


def test_ctrl_c_cancels_the_child_and_resume_closes_its_call(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    home = ws.parent / "home"
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: slow", "explore"))]) as server:
        server.route("CHILD:", delayed(60, answer("too late")))
        args = server.cli_args("PARENT: task", output_format="stream-json", model="fake-model")
        process = start_cli(args, ws, home)
        # the child called the model: the parent is inside its delegate_task call
        ended = interrupt_cli(process, ready=lambda: server.wait_for_requests(2, 60), timeout=60)
        assert ended.rc == 130, ended.stderr
        events = ended.events
        assert events[-1]["type"] == "result"
        assert events[-1]["stop_reason"] == "interrupted"
        session = events[0]["session_id"]
        agents = home / "sessions" / f"{session}.agents"
        (child_transcript,) = agents.glob("*.jsonl")
        kinds = [json.loads(line)["type"] for line in child_transcript.read_text().splitlines()]
        assert "result" in kinds  # the child ended (interrupted) instead of hanging

        before = len(server.chat_requests)
        server.enqueue(answer("resumed fine"))
        resumed = run(server, ws, "go on", "--resume", session)
    assert resumed.rc == 0, resumed.stderr
    (request,) = server.chat_requests[before:]
    assert tool_pairing_problems(request.messages) == []
    answered = [m for m in request.messages if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["d1"]
    assert not requests_for(server, "CHILD:")[1:], "the child was not run again"
    assert all("CHILD: slow" not in str(m.get("content")) for m in request.messages
               if m.get("role") == "user")  # fmt: skip
