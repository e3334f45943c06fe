"""Issue 11 core support: ``context.spawn_agent``, stamped events, usage roll-up, facts for the
gate, per-call concurrency, resume and the fake server's routes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mycode_core.agents import AgentOutcome, AgentRequest
from mycode_core.cli.transcript_history import history_from_events
from mycode_core.hookspecs import hookimpl
from mycode_core.records import RunContext, Tool, ToolCall, ToolResult
from mycode_core.runtime.tools import ToolOrchestrator
from mycode_core.testing import (
    FakeOpenAIServer,
    make_context,
    make_runner,
    run_events,
    tools_plugin,
    turn,
)


def _spawner_tool(outcomes: list[AgentOutcome], request: AgentRequest) -> Tool:
    def handler(arguments: dict[str, Any], context: Any) -> str:
        assert context.current_call is not None and context.current_call.name == "spawn"
        outcome = context.spawn_agent(request)
        outcomes.append(outcome)
        return f"child said: {outcome.final_text}"

    return Tool(name="spawn", description="Spawn a child.", handler=handler)


def _write_tool() -> Tool:
    def handler(arguments: dict[str, Any], context: Any) -> ToolResult:
        (context.workspace / "made.py").write_text("x = 1\n")
        return ToolResult(content="written", metadata={"mutated": ["made.py"]})

    return Tool(name="make", description="Write made.py.", handler=handler)


def test_spawn_agent_runs_a_child_through_the_same_runtime(tmp_path: Path) -> None:
    outcomes: list[AgentOutcome] = []
    request = AgentRequest(task="CHILD TASK", name="helper", instructions="BE A HELPER",
                           tools=["make"], max_steps=5)  # fmt: skip
    runner = make_runner(
        tmp_path,
        tools_plugin(_spawner_tool(outcomes, request), _write_tool()),
        turns=[
            {"tool_calls": [{"id": "p1", "name": "spawn", "arguments": {}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}},
            {"tool_calls": [{"id": "c1", "name": "make", "arguments": {}}],
             "usage": {"input_tokens": 5, "output_tokens": 1}},
            {"content": "made it", "usage": {"input_tokens": 6, "output_tokens": 2}},
            {"content": "parent done", "usage": {"input_tokens": 50, "output_tokens": 5}},
        ],
    )  # fmt: skip
    events = run_events(runner)
    (outcome,) = outcomes
    assert outcome.ok and outcome.final_text == "made it" and outcome.steps == 2
    assert outcome.files_changed == ["made.py"]
    assert outcome.usage == {"input_tokens": 11, "output_tokens": 3}
    # the child's own conversation: its instructions, its task, only its allowed tools
    child_call = runner.turns_model.calls[1]
    assert "BE A HELPER" in child_call["messages"][0]["content"]
    assert child_call["messages"][1] == {"role": "user", "content": "CHILD TASK"}
    assert child_call["tools"] == ["make"]
    stamped = [e for e in events if e.agent_id is not None]
    assert stamped and all(e.agent_id == outcome.agent_id for e in stamped)
    assert all(e.parent_call_id == "p1" for e in stamped)
    assert outcome.agent_id.startswith("helper-")
    assert [e.type for e in events].count("result") == 1
    result = events[-1]
    assert result.usage == {"input_tokens": 161, "output_tokens": 18}
    assert result.usage_by_agent == {
        "main": {"input_tokens": 150, "output_tokens": 15},
        outcome.agent_id: {"input_tokens": 11, "output_tokens": 3},
    }
    # the child's edit is a fact of the parent's run (the parent's gate sees it)
    assert any(o.mutation and o.mutated == ["made.py"] for o in runner.context.observations)
    assert outcome.transcript is not None and Path(outcome.transcript).is_file()


def test_a_childs_context_names_the_agent_it_runs(tmp_path: Path) -> None:
    """Policies and hooks called for a child tell it apart: its id, profile name and depth."""
    seen: list[tuple[Any, ...]] = []

    def probe(arguments: dict[str, Any], context: Any) -> str:
        seen.append((context.agent_name, context.agent_id, context.parent_call_id, context.depth))
        return "ok"

    outcomes: list[AgentOutcome] = []
    request = AgentRequest(task="x", name="reviewer", tools=["probe"])
    runner = make_runner(
        tmp_path,
        tools_plugin(
            _spawner_tool(outcomes, request), Tool(name="probe", description="p", handler=probe)
        ),
        turns=[
            {"tool_calls": [{"id": "m1", "name": "probe", "arguments": {}}]},
            {"tool_calls": [{"id": "p1", "name": "spawn", "arguments": {}}]},
            {"tool_calls": [{"id": "c1", "name": "probe", "arguments": {}}]},
        ],
    )
    run_events(runner)
    (outcome,) = outcomes
    assert seen == [(None, None, None, 0), ("reviewer", outcome.agent_id, "p1", 1)]


class _SessionPlugin:
    """Sets up a session's state in ``register_tools``, as a plugin starting servers does."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools
        self.prompts: list[tuple[str | None, Any, Any]] = []

    @hookimpl
    def register_tools(self, register: Any, context: RunContext) -> None:
        context.session_store["probe.server"] = object()
        context.store["probe.own"] = "the main agent's"
        for tool in self.tools:
            register(tool)

    @hookimpl
    def build_context(self, context: RunContext) -> None:
        server = context.session_store.get("probe.server")
        self.prompts.append((context.agent_id, server, context.store.get("probe.own")))


def test_a_child_shares_its_sessions_store_and_keeps_its_own_store(tmp_path: Path) -> None:
    """``session_store`` is the same dict along the agent tree: what the main agent's
    ``register_tools`` set up (not called for a child) is there in a child's hooks and tools,
    while ``store`` is each agent's own."""
    seen: list[tuple[Any, ...]] = []

    def probe(arguments: dict[str, Any], context: Any) -> str:
        context.session_store.setdefault("probe.calls", []).append(context.agent_id)
        seen.append((context.session_store.get("probe.server"), context.store.get("probe.own")))
        return "ok"

    outcomes: list[AgentOutcome] = []
    request = AgentRequest(task="x", name="reviewer", tools=["probe"])
    plugin = _SessionPlugin(
        [_spawner_tool(outcomes, request), Tool(name="probe", description="p", handler=probe)]
    )
    runner = make_runner(
        tmp_path,
        plugin,
        turns=[
            {"tool_calls": [{"id": "p1", "name": "spawn", "arguments": {}}]},
            {"tool_calls": [{"id": "c1", "name": "probe", "arguments": {}}]},
            {"content": "child done"},
            {"tool_calls": [{"id": "m1", "name": "probe", "arguments": {}}]},
        ],
    )
    run_events(runner)
    (outcome,) = outcomes
    server = runner.context.session_store["probe.server"]
    assert set(plugin.prompts) == {
        (None, server, "the main agent's"),
        (outcome.agent_id, server, None),
    }
    assert seen == [(server, None), (server, "the main agent's")]
    assert runner.context.session_store["probe.calls"] == [outcome.agent_id, None]


def test_a_child_that_cannot_start_is_an_outcome_not_a_crash(tmp_path: Path) -> None:
    outcomes: list[AgentOutcome] = []
    request = AgentRequest(task="x", model="nosuchprefix:model")
    runner = make_runner(
        tmp_path,
        tools_plugin(_spawner_tool(outcomes, request)),
        turns=[{"tool_calls": [{"id": "p1", "name": "spawn", "arguments": {}}]}, {"content": "ok"}],
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    (outcome,) = outcomes
    assert outcome.stop_reason == "model_error" and outcome.error


def test_spawn_agent_without_a_runner_says_so(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="running agent"):
        make_context(tmp_path).spawn_agent(AgentRequest(task="x"))


def test_a_per_call_concurrency_answer_decides_the_batch(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    running: list[str] = []
    both = threading.Barrier(2, timeout=30)

    def handler(arguments: dict[str, Any], ctx: Any) -> str:
        running.append(ctx.current_call.id)
        if arguments["safe"]:
            both.wait()  # only returns if the two safe calls run at the same time
        return "ok"

    context.tools.add(
        Tool(
            name="maybe",
            description="x",
            handler=handler,
            concurrency_safe_for=lambda arguments: bool(arguments.get("safe")),
        )
    )
    orchestrator = ToolOrchestrator(context, lambda e: None, lambda c, t: None)
    calls = [
        ToolCall(id=f"c{i}", name="maybe", arguments={"safe": safe})
        for i, safe in enumerate([True, True, False])
    ]
    outcomes = orchestrator.run(calls)
    orchestrator.close()
    assert [o.result.is_error for o in outcomes] == [False, False, False]
    assert running[-1] == "c2" and context.current_call is None


def test_resume_ignores_child_events_and_closes_the_open_delegate_call() -> None:
    events = [
        {"type": "user", "content": "task"},
        {"type": "assistant", "tool_calls": [{"id": "d1", "name": "delegate_task",
                                              "arguments": "{}"}]},
        {"type": "user", "content": "child task", "agent_id": "a-1", "parent_call_id": "d1"},
        {"type": "assistant", "content": "", "agent_id": "a-1", "parent_call_id": "d1",
         "tool_calls": [{"id": "k1", "name": "read_file", "arguments": "{}"}]},
    ]  # fmt: skip
    messages = history_from_events(events)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[2]["tool_call_id"] == "d1"


def test_fake_server_routes_answer_each_conversation_apart() -> None:
    import json
    import urllib.request

    def ask(base: str, prompt: str) -> str:
        body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        request = urllib.request.Request(
            f"{base}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - local
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    with FakeOpenAIServer([turn("main 1"), turn("main 2")]) as server:
        server.route("KID", turn("kid 1"))
        assert ask(server.base_url, "KID: go") == "kid 1"
        assert ask(server.base_url, "parent") == "main 1"
        assert ask(server.base_url, "KID: again") == server.final_text
        assert ask(server.base_url, "parent") == "main 2"


def test_a_child_starts_with_the_folders_its_parent_opened_and_protected(tmp_path: Path) -> None:
    """``readable_roots``, ``writable_roots`` and ``protected_roots`` (a plugin folder in the
    workspace commands may not write) are copied to a child: its commands are no freer."""
    seen: list[tuple[list[Path], ...]] = []

    def probe(arguments: dict[str, Any], context: Any) -> str:
        seen.append((context.readable_roots, context.writable_roots, context.protected_roots))
        return "ok"

    def spawn(arguments: dict[str, Any], context: Any) -> str:
        context.readable_roots.append(tmp_path / "r")
        context.writable_roots.append(tmp_path / "w")
        context.protected_roots.append(tmp_path / "p")
        return str(context.spawn_agent(AgentRequest(task="x", tools=["probe"])).final_text)

    tools = [
        Tool(name="spawn", description="s", handler=spawn),
        Tool(name="probe", description="p", handler=probe),
    ]
    runner = make_runner(tmp_path, tools_plugin(*tools), turns=[
        {"tool_calls": [{"id": "p1", "name": "spawn", "arguments": {}}]},
        {"tool_calls": [{"id": "c1", "name": "probe", "arguments": {}}]},
        {"content": "child done"},
    ])  # fmt: skip
    run_events(runner)
    assert seen == [([tmp_path / "r"], [tmp_path / "w"], [tmp_path / "p"])]
