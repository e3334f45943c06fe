"""In-process helpers: a run context, a plugin manager, a recording model, a runner."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mycode_core.config import Settings
from mycode_core.records import RunContext, Tool, ToolResult


def make_context(
    tmp_path: Path,
    *,
    settings: Settings | None = None,
    session_id: str = "test-session",
    interactive: bool = False,
    events: list[Any] | None = None,
) -> RunContext:
    """A :class:`RunContext` with workspace ``tmp_path/"workspace"`` and home ``tmp_path/"home"``.

    Events the code under test emits are appended to ``events`` if given.
    """
    workspace = (tmp_path / "workspace").resolve()
    home = (tmp_path / "home").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    return RunContext(
        workspace=workspace,
        home=home,
        settings=settings or Settings(),
        session_id=session_id,
        interactive=interactive,
        emit=events.append if events is not None else None,
    )


def make_plugin_manager(*plugins: object, load_entry_points: bool = False, warn: Any = None) -> Any:
    """A fresh plugin manager with the core's built-ins and ``plugins`` (no entry points).

    ``warn`` receives one line per plugin that failed to load or validate.
    """
    from mycode_core.plugins import get_plugin_manager

    return get_plugin_manager(extra_plugins=plugins, load_entry_points=load_entry_points, warn=warn)


def installed_plugin(name: str) -> object:
    """The installed plugin whose ``mycode`` entry point is ``name`` (e.g. ``"builtin_tools"``).

    For a plugin's tests that run beside another plugin without importing its package. The
    test is skipped, naming the entry point, when no installed distribution provides it.
    """
    from importlib import metadata

    import pytest

    from mycode_core.plugins import ENTRY_POINT_GROUP

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    pytest.skip(f"no installed plugin provides the {ENTRY_POINT_GROUP!r} entry point {name!r}")


def requires_plugin(name: str) -> Any:
    """A ``skipif`` mark for a test that needs the installed plugin ``name`` (its ``mycode``
    entry point), e.g. a subprocess run with ``MYCODE_LOAD_PLUGINS=builtin_tools``."""
    from importlib import metadata

    import pytest

    from mycode_core.plugins import ENTRY_POINT_GROUP

    names = {ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    return pytest.mark.skipif(name not in names, reason=f"needs the installed plugin {name!r}")


def collect_tools(pm: Any, context: RunContext) -> dict[str, Tool]:
    """The tools every ``register_tools`` implementation contributes, by name."""
    from mycode_core.runtime.setup import collect_tools as collect

    problems: list[str] = []
    collect(pm, context, problems.append)
    if problems:
        raise RuntimeError("; ".join(problems))
    return {tool.name: tool for tool in context.tools.all()}


def call_tool(
    tool: Tool,
    arguments: dict[str, Any],
    context: RunContext,
    *,
    permission: Any = None,
) -> ToolResult:
    """Call ``tool`` exactly as the core does, through the tool orchestrator: the schema check,
    the workspace boundary for its paths, plan mode, ``permission(call, tool)`` if given (a
    ``permission_verdict``-like callable; default: allow), the handler (sync or async) and the
    path facts. Every failure comes back as an error :class:`ToolResult`.
    """
    import json

    from mycode_core.records import ToolCall
    from mycode_core.runtime.tools import ToolOrchestrator

    context.tools.add(tool, replace=True)
    orchestrator = ToolOrchestrator(
        context,
        context.emit,
        permission or (lambda call, tool: None),
    )
    call = ToolCall(
        id="call_test",
        name=tool.name,
        arguments=arguments,
        raw_arguments=json.dumps(arguments, default=str),
    )
    try:
        (outcome,) = orchestrator.run([call])
    finally:
        orchestrator.close()
    return outcome.result


def _scripted_model_class() -> type:
    from mycode_core.providers.scripted import ScriptedModel

    return ScriptedModel


class TurnsModel:
    """An in-process model for unit tests: plays turns like ``scripted:PATH`` and records calls.

    Turns are SPEC §6 objects (``{"content", "tool_calls"}``), ``{"error": {"kind", "message",
    "retry_after"}}`` to raise a classified model error, and may carry ``finish_reason`` and
    ``usage`` (``{"input_tokens", "output_tokens"}``, replacing the estimate). ``calls`` holds
    a copy of the ``messages`` and tool names of every request. Playing is delegated to the
    real scripted provider, so the semantics are the same.
    """

    def __init__(self, turns: Sequence[Mapping[str, Any]] = (), model_id: str = "test:model"):
        import tempfile

        self.model_id = model_id
        self.turns = [dict(t) for t in turns]
        self.calls: list[dict[str, Any]] = []
        handle, name = tempfile.mkstemp(prefix="mycode-turns-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as fh:
                json.dump(self.turns, fh)
            self._player = _scripted_model_class()(f"scripted:{name}", Settings())
        finally:
            os.unlink(name)

    def abort(self) -> None:
        """Cut a pending scripted ``delay`` short."""
        abort = getattr(self._player, "abort", None)
        if abort is not None:
            abort()

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: Any
    ) -> Any:
        """Record the request, then answer with the next turn."""
        self.calls.append(
            {
                "messages": json.loads(json.dumps(messages)),
                "tools": [t["function"]["name"] for t in tools],
            }
        )
        position = len(self.calls) - 1
        reply = self._player.complete(messages, tools, on_text)
        turn = self.turns[position] if position < len(self.turns) else {}
        if isinstance(turn.get("usage"), dict):
            reply.usage = {k: int(v) for k, v in turn["usage"].items()}
        return reply


def model_plugin(model: Any, prefix: str = "test") -> object:
    """A plugin registering ``model`` under ``prefix`` (select it with ``PREFIX:anything``)."""
    from mycode_core.hookspecs import hookimpl
    from mycode_core.records import ModelProvider

    class _ModelPlugin:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(ModelProvider(prefix=prefix, factory=lambda _id, _settings: model))

    return _ModelPlugin()


def tools_plugin(*tools: Tool) -> object:
    """A plugin registering ``tools``."""
    from mycode_core.hookspecs import hookimpl

    class _ToolsPlugin:
        @hookimpl
        def register_tools(self, register: Any, context: RunContext) -> None:
            for tool in tools:
                register(tool)

    return _ToolsPlugin()


def make_runner(
    tmp_path: Path,
    *plugins: object,
    turns: Sequence[Mapping[str, Any]] | None = None,
    session_id: str = "test-session",
    ask: Callable[..., Any] | None = None,
    **settings: Any,
) -> Any:
    """An :class:`~mycode_core.runtime.loop.AgentRunner` on ``tmp_path/"workspace"``.

    With ``turns`` a :class:`TurnsModel` is registered as ``test:`` and selected; it is
    available as ``runner.model`` after :meth:`prepare` (and as ``runner.turns_model``).
    With ``ask`` the run is interactive and ``ask`` answers its questions.
    ``settings`` override :class:`~mycode_core.config.Settings` fields.
    """
    from mycode_core.cli.mentions import expand
    from mycode_core.runtime.child import run_child
    from mycode_core.runtime.loop import AgentRunner

    workspace = (tmp_path / "workspace").resolve()
    home = (tmp_path / "home").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    extra = list(plugins)
    turns_model = None
    if turns is not None:
        turns_model = TurnsModel(turns)
        extra.append(model_plugin(turns_model))
        settings.setdefault("model", "test:model")
    runner: Any = AgentRunner(
        spawn_child=run_child,
        expand_prompt=expand,
        pm=make_plugin_manager(*extra),
        settings=Settings(**settings),
        workspace=workspace,
        home=home,
        session_id=session_id,
        interactive=ask is not None,
        ask=ask,
    )
    runner.turns_model = turns_model
    return runner


def child_runner(tmp_path: Path, *plugins: object, task: str = "CHILD", **settings: Any) -> Any:
    """A :func:`make_runner` whose main agent starts one child agent on ``task`` (a ``spawn``
    tool calling ``context.spawn_agent``); the child answers ``child done``, then the main
    agent ``parent done``. For what a plugin does in a subagent: the child's first request is
    ``runner.turns_model.calls[1]``."""
    from mycode_core.agents import AgentRequest

    def spawn(arguments: dict[str, Any], context: RunContext) -> str:
        return str(context.spawn_agent(AgentRequest(task=task, name="helper")).final_text)

    spawner = Tool(name="spawn", description="Start a child agent.", handler=spawn)
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "spawn-1", "name": "spawn", "arguments": {}}]},
        {"content": "child done"},
        {"content": "parent done"},
    ]
    return make_runner(tmp_path, *plugins, tools_plugin(spawner), turns=turns, **settings)


def run_events(runner: Any, prompt: str = "do the task", *, close: bool = True) -> list[Any]:
    """Run one task to its end and return every event (the last is ``result``)."""
    try:
        return list(runner.run(prompt))
    finally:
        if close:
            runner.close()


def run_prompt(runner: Any, prompt: str = "do the task", *, close: bool = True) -> list[Any]:
    """Like :func:`run_events`, but a ``/name args`` prompt goes to the plugin slash command
    ``name`` first, as ``mycode -p "/name args"`` does.

    The command's output comes back as a ``notice`` event (``source="/name"``); when it returns
    a prompt, that prompt runs and its events follow; otherwise no turn runs. A prompt that
    names no plugin command runs as it is.
    """
    from mycode_core.cli.slash import dispatch, split_command
    from mycode_core.events import NoticeEvent

    try:
        runner.prepare()
        problems: list[str] = []
        slash = dispatch(runner, prompt, problems.append)
        events: list[Any] = [NoticeEvent(level="warning", message=m) for m in problems]
        if slash is not None:
            parts = split_command(prompt)
            name = parts[0] if parts is not None else ""
            if slash.output:
                events.append(NoticeEvent(message=slash.output, source=f"/{name}"))
            if not slash.prompt:
                return events
            prompt = slash.prompt
        return events + list(runner.run(prompt))
    finally:
        if close:
            runner.close()


def tool_pairing_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What breaks the chat-completions pairing rule in ``messages`` (``[]`` when valid).

    Every ``tool`` message must answer a call of the assistant message just before the run of
    tool messages it belongs to, and every such call must be answered before the next
    non-tool message. Use it to check a ``compact_context`` implementation.
    """
    problems: list[str] = []
    open_ids: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id in open_ids:
                open_ids.remove(call_id)
            else:
                problems.append(f"message {index}: tool result {call_id!r} answers no open call")
            continue
        if open_ids:
            problems.append(f"message {index}: calls {open_ids} were never answered")
            open_ids = []
        for tool_call in message.get("tool_calls") or ():
            open_ids.append(str(tool_call.get("id")))
    if open_ids:
        problems.append(f"end: calls {open_ids} were never answered")
    return problems


def system_prompt_for(tmp_path: Path, *plugins: object, **settings: Any) -> str:
    """The system prompt a run with ``plugins`` would send (every ``build_context`` section,
    then every ``transform_system_prompt``)."""
    from mycode_core.runtime.hookcalls import HookGuard
    from mycode_core.runtime.lifecycle import transform_system_prompt
    from mycode_core.runtime.setup import system_prompt

    context = make_context(tmp_path, settings=Settings(**settings))
    pm = make_plugin_manager(*plugins)
    context.plugin_manager = pm
    notices: list[str] = []
    guard = HookGuard(pm, lambda event: notices.append(event.message))
    text = transform_system_prompt(guard, system_prompt(pm, context, notices.append), context)
    if notices:
        raise RuntimeError("; ".join(notices))
    return text
