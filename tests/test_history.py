"""Append-only history vs. the model view built from it; the default compaction."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mycode_core.builtins.compaction import trim_to_budget
from mycode_core.runtime.context import ModelView
from mycode_core.runtime.history import History
from mycode_core.testing import tool_pairing_problems
from mycode_core.tokens import count_message

SYSTEM = {"role": "system", "content": "You are a test."}


def test_history_is_append_only() -> None:
    history = History()
    history.append({"role": "user", "content": "task"})
    history.append({"role": "assistant", "content": "ok"})
    snapshot = history.messages()
    snapshot.append({"role": "user", "content": "sneaky"})
    snapshot.clear()
    assert [m["content"] for m in history.messages()] == ["task", "ok"]
    assert len(history) == 2


def test_the_view_is_system_plus_history_when_it_fits() -> None:
    history = History()
    history.append({"role": "user", "content": "task"})

    def never(messages: list[dict[str, Any]], budget: int, *_: Any) -> None:
        raise AssertionError("no compaction when everything fits")

    view = ModelView("You are a test.", 10_000, never)
    messages, compacted = view.build(history)
    assert not compacted
    assert messages == [SYSTEM, {"role": "user", "content": "task"}]


def test_the_view_compacts_when_over_budget_and_never_changes_history() -> None:
    history = History()
    for i in range(30):
        history.append({"role": "user", "content": f"message {i} " + "x " * 50})
    seen: list[int] = []

    def compactor(messages: list[dict[str, Any]], budget: int, *_: Any) -> list[dict[str, Any]]:
        seen.append(budget)
        return [messages[0], messages[-1]]

    view = ModelView("You are a test.", 200, compactor)
    messages, compacted = view.build(history)
    assert compacted and seen == [200]
    assert len(messages) == 2 and messages[0] == SYSTEM
    assert len(history) == 30


def test_a_declined_compaction_sends_the_full_view() -> None:
    history = History()
    history.append({"role": "user", "content": "x " * 500})
    view = ModelView("sys", 50, lambda messages, budget, *_: None)
    messages, compacted = view.build(history, force_compact=True)
    assert not compacted and len(messages) == 2


def _conversation(turns: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """System, the task, then assistant turns with ``calls`` tool calls of ``size`` words."""
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "the task"}]
    for n, (calls, size) in enumerate(turns):
        text = "word " * size
        if calls == 0:
            messages.append({"role": "assistant", "content": text})
            messages.append({"role": "user", "content": f"[mycode runtime] guidance {n}"})
            continue
        ids = [f"call_{n}_{k}" for k in range(calls)]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}}
                    for i in ids
                ],
            }
        )
        messages += [{"role": "tool", "tool_call_id": i, "content": text} for i in ids]
    return messages


def test_compaction_keeps_system_task_and_recent_turns() -> None:
    messages = _conversation([(1, 200)] * 10)
    trimmed = trim_to_budget(messages, 1200)
    assert trimmed[0] == SYSTEM
    assert trimmed[1] == {"role": "user", "content": "the task"}
    assert "left out" in trimmed[2]["content"]
    assert trimmed[-1] == messages[-1] and trimmed[-2] == messages[-2]
    assert len(trimmed) < len(messages)
    assert sum(count_message(m) for m in trimmed) <= 1200
    assert tool_pairing_problems(trimmed) == []


@settings(max_examples=150, deadline=None)
@given(
    turns=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 120)), min_size=0, max_size=25),
    budget=st.integers(50, 4000),
)
def test_compaction_never_orphans_tool_messages(turns: list[tuple[int, int]], budget: int) -> None:
    messages = _conversation(turns)
    original = copy.deepcopy(messages)
    trimmed = trim_to_budget(messages, budget)
    assert messages == original  # the input (the history's messages) is never changed
    assert trimmed[0] == SYSTEM and trimmed[1] == original[1]
    assert tool_pairing_problems(trimmed) == []
    # whatever is kept after the head is a contiguous recent tail of the conversation
    tail = [m for m in trimmed[2:] if "left out" not in str(m.get("content"))]
    if tail:
        assert original[len(original) - len(tail) :] == tail


def _result_turn(history: History, n: int, words: int = 20) -> None:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    history.append({"role": "assistant", "content": None, "tool_calls": [call]})
    history.append({"role": "tool", "tool_call_id": f"c{n}", "content": "word " * words})


def test_below_the_threshold_the_view_is_offered_again_every_recheck_results() -> None:
    """Masking in batches: below the threshold the compactor sees the view again after
    ``recheck`` new tool results (a decline starts the count again); past the threshold it
    is compacted as always."""
    history = History()
    history.append({"role": "user", "content": "task"})
    offers: list[int] = []

    def compactor(
        messages: list[dict[str, Any]], budget: int, reason: str, instructions: Any, tokens: int
    ) -> Any:
        offers.append(sum(m.get("role") == "tool" for m in messages))
        assert reason == "proactive"
        assert tokens == sum(map(count_message, messages))  # the hooks need not count again
        return None if len(offers) < 4 else [messages[0], messages[1]]

    view = ModelView("sys", 10_000, compactor, threshold=0.8, recheck=3)
    for n in range(9):
        _result_turn(history, n)
        assert view.build(history)[1] is None
    assert offers == [3, 6, 9]  # declined each time, the counter starts again
    history.append({"role": "user", "content": "word " * 8_000})  # past the threshold now
    messages, change = view.build(history)
    assert change is not None and change.reason == "proactive" and offers[-1] == 9
    assert len(messages) == 2
    plain = ModelView("sys", 10_000, compactor, threshold=0.8)  # no recheck: never offered
    short = History()
    for n in range(9):
        _result_turn(short, n)
        assert plain.build(short)[1] is None
    assert len(offers) == 4


def test_the_default_compaction_declines_a_batch_offer_below_the_threshold(
    tmp_path: Any,
) -> None:
    from mycode_core.builtins.compaction import compact_context
    from mycode_core.testing import make_context

    context = make_context(tmp_path)
    messages = [SYSTEM, {"role": "user", "content": "task " * 100}]
    tokens = sum(map(count_message, messages))
    budget = tokens * 2
    assert compact_context(messages, budget, context, "proactive", tokens) is None
    assert compact_context(messages, budget, context, "reactive", tokens) is not None
    assert compact_context(messages, budget // 3, context, "proactive", tokens) is not None


def test_the_fallback_compaction_keeps_the_models_last_calls(tmp_path: Any) -> None:
    """Without the context engine, a reply whose three reads fill more than half the room was
    cut with everything before it: the next request showed the task and a note, not the calls
    the model had just made nor their results."""
    from mycode_core.testing import FAST_RETRY_CONFIG, FakeOpenAIServer, run_cli, turn

    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(FAST_RETRY_CONFIG + "\ncontext_window = 6000\n")
    for n in range(3):
        lines = [f"line {i} of file {n}: value = {i * n} # filler" for i in range(40)]
        (workspace / f"f{n}.py").write_text("\n".join(lines) + "\n")
    reads = [
        turn(f"step {r}", [{"id": f"r{r}_{n}", "name": "read_file",
                            "arguments": {"path": f"f{n}.py"}} for n in range(3)])
        for r in range(4)
    ]  # fmt: skip
    with FakeOpenAIServer(reads, context_window=6000) as server:
        args = server.cli_args("read the files", output_format="stream-json")
        done = run_cli([*args, "--permission-mode", "bypass"], workspace, home,
                       {"MYCODE_LOAD_PLUGINS": "builtin_tools"})  # fmt: skip
    assert done.rc == 0, done.stderr
    assert done.of_type("compaction") and server.overflows == 0
    for number, request in enumerate(server.chat_requests[1:]):  # each after reply `number`
        shown = [m.get("tool_call_id") for m in request.messages if m["role"] == "tool"]
        assert shown[-3:] == [f"r{number}_{n}" for n in range(3)], number
        assert tool_pairing_problems(request.messages) == []
