"""Long sessions against a fake server with a small window: real subprocesses, real tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_core.testing import FakeOpenAIServer, tool_pairing_problems
from mycode_core.testing.server import LLAMA_CPP_OVERFLOW

TASK = "TASK-7319: find which file defines value = 351"


def test_a_long_session_learns_the_window_and_compacts_instead_of_overflowing(
    workspace: Path, home: Path, h: Any
) -> None:
    server = FakeOpenAIServer(
        h.read_turns(60),
        context_window=8_000,
        overflow_message=LLAMA_CPP_OVERFLOW,
        side_responder=h.summariser(),
    )
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 0, result.stderr
    assert result.result is not None and result.result["stop_reason"] == "completed"
    assert server.overflows == 1  # learned from the first error, never hit again
    notices = [n["message"] for n in result.of_type("notice")]
    assert any("8000 tokens (learned" in m for m in notices), notices
    compactions = result.of_type("compaction")
    assert compactions and compactions[0]["reason"] == "reactive"
    assert all(c["context_window"] == 8_000 for c in compactions)
    assert any(c["reason"] == "proactive" for c in compactions)
    for c in compactions:
        assert c["after_tokens"] < c["before_tokens"] and c["summary"]
    requests = h.main_requests(server)
    assert len(requests) == 61 + 1  # 60 reads, the final answer, and the one rejected
    sizes = [server.prompt_tokens(r.body) for r in requests]
    (failed,) = [i for i, size in enumerate(sizes) if size > 8_000]
    assert all(size <= 8_000 - 2_000 for size in sizes[failed + 1 :])  # the reply reserve
    for request in requests:
        assert TASK in json.dumps(request.messages)  # the task survives every compaction
        assert tool_pairing_problems(request.messages) == []
    last = requests[-1].messages
    assert "Recorded by mycode" in last[1]["content"] and "f3.py" in last[1]["content"]
    assert "Read several files." in last[1]["content"]  # the model's summary


def test_between_compactions_every_request_extends_the_previous_one(
    workspace: Path, home: Path, h: Any
) -> None:
    (home / "config.toml").write_text("context_window = 8000\n", encoding="utf-8")
    server = FakeOpenAIServer(h.read_turns(80), side_responder=h.summariser())
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 0, result.stderr
    compactions = len(result.of_type("compaction"))
    assert compactions >= 2
    requests = [r.messages for r in h.main_requests(server)]
    broken = [i for i in range(1, len(requests)) if not h.is_prefix(requests[i - 1], requests[i])]
    assert len(broken) == compactions  # only at compaction points
    for i in broken:
        assert requests[i][1]["content"].startswith("[mycode: context summary]")
