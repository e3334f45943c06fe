"""Long sessions against a fake server with a small window: real subprocesses, real tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import FakeOpenAIServer, tool_pairing_problems, turn
from mycode_core.testing.server import LLAMA_CPP_OVERFLOW

TASK = "TASK-7319: find which file defines value = 351"


def requests_with_cap(server: FakeOpenAIServer) -> set[int]:
    """The ``max_tokens`` values the requests carried."""
    return {
        int(r.body.get("max_tokens") or 0)
        for r in server.requests
        if isinstance(r.body, dict) and "messages" in r.body
    }


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
    # llama-server rejects only a prompt that does not fit by itself (a reply cap beyond the
    # window is no error there): the requests, each asking for a 16,384-token reply (a quarter
    # of the default window), grow until one does not fit; its error names the window, the
    # view is compacted for it at once (reactive), and proactively from then on
    assert compactions and compactions[0]["reason"] == "reactive"
    assert all(c["reason"] == "proactive" for c in compactions[1:])
    assert requests_with_cap(server) == {16_384, 2_000}
    assert all(c["context_window"] == 8_000 for c in compactions)
    for c in compactions:
        assert c["after_tokens"] < c["before_tokens"]
        assert c["stage"] in ("mask", "summary") and (c["stage"] == "mask" or c["summary"])
    assert [c["count"] for c in compactions] == list(range(1, len(compactions) + 1))
    assert all(c["steps_since_last"] >= 2 for c in compactions[1:])  # no thrash
    requests = h.main_requests(server)
    assert len(requests) == 61 + 1  # 60 reads, the final answer, and the one rejected
    sizes = [server.prompt_tokens(r.body) for r in requests]
    rejected = next(i for i, size in enumerate(sizes) if size > 8_000)  # the prompt alone
    assert all(int(r.body["max_tokens"]) == 16_384 for r in requests[: rejected + 1])
    assert all(size <= 8_000 - 2_000 for size in sizes[rejected + 1 :])  # the reply reserve
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
    events = result.of_type("compaction")
    compactions = len(events)
    assert compactions >= 2
    requests = [r.messages for r in h.main_requests(server)]
    broken = [i for i in range(1, len(requests)) if not h.is_prefix(requests[i - 1], requests[i])]
    assert len(broken) == compactions  # only at compaction points
    for i, event in zip(broken, events, strict=True):
        if event["stage"] == "summary":
            assert requests[i][1]["content"].startswith("[mycode: context summary]")
        else:  # masked: the same turns, old results as one-line placeholders
            assert event["stage"] == "mask"
            assert "[masked result of read_file(path=" in json.dumps(requests[i])
    # 700-token reads against ~4,700 tokens of room: a compaction every 2-3 steps at most
    assert len(requests) - 1 - len(broken) >= 0.6 * (len(requests) - 1)


def test_calibration_follows_a_server_that_counts_more_tokens(
    workspace: Path, home: Path, h: Any
) -> None:
    """The server's tokenizer counts 35% more than ours; its reported usage corrects us (an
    uncalibrated view compacted at 95% of 7,000 would send 9,000 real tokens)."""
    config = (
        "context_window = 8000\nmax_output_tokens = 1000\n[context]\ncompact_threshold = 0.95\n"
    )
    (home / "config.toml").write_text(config, encoding="utf-8")
    server = FakeOpenAIServer(
        h.read_turns(40), context_window=8_000, token_factor=1.35, side_responder=h.summariser()
    )
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 0, result.stderr
    assert server.overflows == 0
    assert len(result.of_type("compaction")) >= 2


def test_the_window_is_discovered_from_the_server(workspace: Path, home: Path, h: Any) -> None:
    server = FakeOpenAIServer(
        h.read_turns(40),
        model="m",
        model_metadata={"max_model_len": 8_000},
        context_window=8_000,
        side_responder=h.summariser(),
    )
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 0, result.stderr
    assert server.overflows <= 1  # discovery runs in the background: at worst one lesson
    assert any(r.method == "GET" and r.path.endswith("/models") for r in server.requests)
    sources = {c["window_source"] for c in result.of_type("compaction")}
    assert sources & {"server", "learned"}
    assert all(c["context_window"] == 8_000 for c in result.of_type("compaction"))


def test_an_error_naming_no_limit_halves_the_budget_once_then_overflows(
    workspace: Path, home: Path, h: Any
) -> None:
    from mycode_core.testing.server import NO_LIMIT_OVERFLOW

    server = FakeOpenAIServer(
        context_window=10, overflow_message=NO_LIMIT_OVERFLOW, side_responder=h.summariser()
    )
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 1
    assert result.result is not None and result.result["stop_reason"] == "context_overflow"
    assert len(h.main_requests(server)) == 2
    assert any("halving" in n["message"] for n in result.of_type("notice"))


def test_resume_rebuilds_the_same_view(workspace: Path, home: Path, h: Any) -> None:
    (home / "config.toml").write_text("context_window = 8000\n", encoding="utf-8")
    server = FakeOpenAIServer(h.read_turns(30), side_responder=h.summariser())
    with server:
        first = h.run(server, workspace, home, TASK)
        assert first.rc == 0, first.stderr
        assert first.of_type("compaction")
        before = h.main_requests(server)[-1].messages
        session = first.result["session_id"] if first.result else ""
        second = h.run(server, workspace, home, "and now the next question", "--resume", session)
    assert second.rc == 0, second.stderr
    after = h.main_requests(server)[-1].messages
    assert h.is_prefix(before, after)  # the compacted view, not the whole history again
    assert after[len(before)]["role"] == "assistant"  # the first run's final answer
    assert after[-1]["content"].startswith("and now the next question")


@pytest.mark.parametrize("strategy", ["summary", "off", "mask"])
def test_a_last_turn_bigger_than_the_budget_keeps_its_calls(
    workspace: Path, home: Path, h: Any, strategy: str
) -> None:
    """Eight reads in one reply fill more than the budget: the next request still shows that
    reply's calls, each with its result (the older ones masked), not only the summary — the
    model would read the same files again, not knowing it had."""
    config = f'context_window = 6000\n[context]\nstrategy = "{strategy}"\n'
    (home / "config.toml").write_text(config, encoding="utf-8")
    rounds = [
        turn(f"round {r}", [{"id": f"p{r}_{k}", "name": "read_file",
                             "arguments": {"path": f"f{k}.py"}} for k in range(8)])
        for r in range(3)
    ]  # fmt: skip
    server = FakeOpenAIServer(rounds, side_responder=h.summariser(), context_window=6000)
    with server:
        result = h.run(server, workspace, home, TASK)
    assert result.rc == 0, result.stderr
    assert result.of_type("compaction") and server.overflows == 0
    requests = h.main_requests(server)
    for number, request in enumerate(requests[1:]):  # each after round `number`
        shown = [m.get("tool_call_id") for m in request.messages if m["role"] == "tool"]
        assert [f"p{number}_{k}" for k in range(8)] == shown[-8:], (strategy, number)
        assert not tool_pairing_problems(request.messages)
