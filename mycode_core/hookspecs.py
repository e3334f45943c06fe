"""The hook specifications: everything a mycode plugin can contribute or decide.

Hooks are synchronous keyword-only calls (a plugin needing asyncio runs its own loop in a
thread). A ``firstresult`` hook's ``None`` passes; built-in defaults are ``trylast``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from mycode_core.events import AgentEvent
    from mycode_core.records import (
        CompactedView,
        CompletionVerdict,
        ContextSection,
        ModelProvider,
        Observation,
        PermissionVerdict,
        PromptVerdict,
        RunContext,
        SlashCommand,
        StagnationVerdict,
        Tool,
        ToolCall,
        ToolResult,
    )

PROJECT = "mycode"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(historic=True)
def add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add your plugin's own hookspecs so other plugins can implement them.

    Historic: called once for every plugin as it is registered. Call
    ``pluginmanager.add_hookspecs(module_or_class)`` and the hooks with
    ``context.hook.<name>(...)``. Implement a hook that may be absent (another plugin's) with
    ``@hookimpl(optionalhook=True)``.
    """


@hookspec
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Contribute tools the model can call: ``register(tool)`` for each.

    Called once per run, before the first model request. A tool is usually a function decorated with
    :func:`mycode_core.tool`. Names must match ``^[a-zA-Z0-9_-]{1,64}$`` and be unique across
    plugins (a duplicate is an error naming both plugins).
    """


@hookspec
def register_models(register: Callable[[ModelProvider], None]) -> None:
    """Contribute model providers: ``register(ModelProvider(prefix="name", factory=...))``.

    ``--model name:rest`` then selects it; a model id without a registered prefix goes to the
    OpenAI-compatible provider.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``mycode`` command line with ``@cli.command()``.

    Called when the CLI is built. Import heavy libraries inside the command functions so ``mycode
    --help`` stays fast.
    """


@hookspec
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """Contribute ``/name`` commands to the interactive session (and ``mycode -p "/name"``).

    Called once per session: ``register(SlashCommand(name=..., run=fn))``; ``fn(args, context)``
    returns a ``SlashResult``, a prompt string to run as the user's turn, or ``None``. An
    ``alias_of="other"`` command is a short name that yields: kept only if no built-in and no other
    command has its name.
    """


@hookspec
def build_context(context: RunContext) -> list[ContextSection] | None:
    """Contribute sections to the system prompt the model sees.

    Return ``ContextSection`` items (lower ``priority`` first), plain strings, or ``None``. Called
    when a run starts (``context.prompt`` holds the first task) and before each later turn; return
    the same text when nothing changed, so the prompt prefix stays cacheable. Results of all plugins
    are combined; a ``wrapper=True`` implementation sees (and returns) one flat list.
    """


@hookspec(firstresult=True)
def permission_verdict(call: ToolCall, tool: Tool, context: RunContext) -> PermissionVerdict | None:
    """Decide whether a tool call (arguments parsed) may run: ``allow``, ``deny`` or ``ask``.

    Called before every tool call; stops at the first non-``None`` result. The default (plugin
    ``builtin_tools``, ``trylast``) applies the permission rules and modes; without it, everything
    is allowed. An ``ask`` asks the user interactively and is a denial in ``-p`` mode.
    """


@hookspec(firstresult=True)
def stagnation_verdict(
    observations: list[Observation], context: RunContext
) -> StagnationVerdict | None:
    """Judge whether the agent is going round in circles: ``continue``, ``guide`` or ``stop``.

    Called after every batch of tool calls with all observations of the run so far; stops at the
    first non-``None`` result. The core's default (``trylast``) detects repeated calls, results and
    resources, and A-B-A-B alternation.
    """


@hookspec(firstresult=True)
def completion_verdict(
    final_text: str, observations: list[Observation], context: RunContext
) -> CompletionVerdict | None:
    """Judge a final answer: is the work verified done?

    Called when the model answers without tool calls; stops at the first non-``None`` result; a
    ``wrapper=True`` implementation may veto the inner verdict. Without any plugin the verdict is
    ``pass``; ``fail`` sends the feedback to the model as guidance (bounded). With
    ``--completion-policy off`` (``[completion_gate] policy``) no implementation is called.
    ``context.store`` holds e.g. the todo list.
    """


@hookspec(firstresult=True)
def compact_context(
    messages: list[dict[str, Any]],
    budget: int,
    context: RunContext,
    reason: str,
    instructions: str | None,
    tokens: int,
) -> list[dict[str, Any]] | CompactedView | None:
    """Shrink the model view (``messages``, system message first) to fit ``budget``.

    ``reason`` is ``proactive`` (the view passed ``[context] compact_threshold``; with a ``mask``
    strategy also every ``keep_recent_results`` new tool results below it: return ``None`` if there
    is nothing to do), ``reactive`` (after a context-length error; ``budget`` is lowered to the
    learned limit) or ``manual`` (``/compact``, with the user's ``instructions``). ``tokens`` is the
    core's count of ``messages``. ``context`` offers ``pins``, ``observations``, ``store["todos"]``
    and ``side_request``.

    Stops at the first non-``None`` result: the new messages or a ``CompactedView`` (with the
    summary). The default (``trylast``) keeps the system prompt, the first user turn and recent
    turns. A ``wrapper=True`` implementation may *veto* by returning ``None`` from ``yield`` (the
    view is sent unchanged; if it cannot fit, the run ends with ``context_overflow``). Raise
    ``mycode_core.api.ContextOverflow`` to end the run saying what is too big (history stays).
    """


@hookspec
def on_event(event: AgentEvent, context: RunContext) -> None:
    """Observe every event of the stream (SPEC §4), in order; the return value is ignored.

    Observers run off the loop's thread (one worker per plugin), so a slow observer never slows the
    run; one slower than ``observer_warn_ms`` gets one notice. Decorate an implementation with
    ``@mycode_core.subscribe("tool_result", "result")`` to get only those types. An exception is
    reported once as a notice and does not stop the run. Observers have seen every event of a run
    before ``mycode`` exits.
    """


@hookspec(firstresult=True)
def summarize_context(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    budget: int,
    context: RunContext,
) -> str | None:
    """Write the summary of the older turns (``messages``, oldest first) a compaction replaces.

    Called by the ``context_engine`` plugin (never with the system message); stops at the
    first non-``None`` result. Its default (``trylast``) asks the model through
    ``context.side_request``, folding in ``previous_summary``. Return ``""`` to keep only the
    recorded facts (files read and changed, test results, todos) and pins, which the engine appends
    anyway. The summary should stay well under ``budget`` (the default aims at 15%);
    ``instructions`` are the user's ``/compact`` ones.
    """


@hookspec(firstresult=True)
def view_message(
    message: dict[str, Any], budget: int, context: RunContext
) -> dict[str, Any] | None:
    """Give the form a history message takes in the model view (``None``: as it is).

    Called once per message, when it enters history (again on ``--resume``), so the result must
    depend only on the message (do not change it) and ``budget``. Stops at the first non-``None``
    result, a new message dict. History keeps the original. The ``context_engine`` plugin turns a
    big tool result into head + tail + the path of the full output, and elides huge tool-call
    arguments.
    """


@hookspec
def register_settings(register: Callable[[str, type[BaseModel]], None]) -> None:
    """Contribute the schema of a plugin's own config table: ``register(name, model)``.

    ``name`` is the table (``[name]`` in ``config.toml``), ``model`` a pydantic model class of it.
    Called once per run, before it starts; every config layer's table is validated: a bad value is a
    one-line configuration error (exit code 2), an unknown key a did-you-mean warning (unless the
    model allows extra keys). Read the values with ``settings.section(name)``.
    """


# Lifecycle points that external hook protocols (Claude Code hooks) need; a raise is one notice.


@hookspec
def session_start(source: str, context: RunContext) -> list[str] | None:
    """Contribute context lines, pinned in the system prompt, when a session starts.

    Called once when a runner is prepared, before the first model request. ``source`` is
    ``startup``, ``resume`` (``--resume``/``--continue``/``/resume``) or ``clear`` (``/clear`` in an
    interactive session). Results of all plugins are combined.
    """


@hookspec
def user_prompt_verdict(prompt: str, context: RunContext) -> PromptVerdict | None:
    """Judge the user's prompt before the model sees it: block it or add context.

    Called for every user turn, before it enters the history. Results of all plugins are combined:
    any ``block`` drops the prompt (the turn ends with ``stop_reason`` ``interrupted`` and the
    reason as its error); every ``context`` line is appended to the prompt the model sees.
    """


@hookspec
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """React to a finished tool call: return feedback lines the model sees with its result.

    Called after each executed tool call (successful or failed), in call order, before the results
    are sent to the model. Results of all plugins are combined; each line is appended to the tool
    result the model sees (the ``tool_result`` event keeps the tool's own output).
    """


@hookspec
def transform_tool_result(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> ToolResult | None:
    """Replace a tool's result before the model sees it (e.g. redact secrets).

    Called for every answered call, failures included (denied, unknown tool: ``tool`` is ``None``,
    crashed), chained in plugin order: each implementation gets the previous one's result; return a
    replacement or ``None``. The ``tool_result`` event carries the last result as ``content`` and
    the tool's own ``content``/``is_error`` as ``original``; ``metadata`` stays the tool's. A result
    with ``call_id`` set must name this call. Raising, or answering with anything else, skips the
    implementation for the rest of the run (one notice).
    """


@hookspec
def transform_system_prompt(prompt: str, context: RunContext) -> str | None:
    """Rewrite the system prompt built from every ``build_context`` section (e.g. a persona).

    Chained in plugin order like ``transform_tool_result``: return the new text or ``None``. Called
    when the prompt is built and again when it is refreshed between turns.
    """


@hookspec
def session_end(reason: str, context: RunContext) -> None:
    """Observe the end of a session: called once, synchronously, when the runner closes.

    ``reason`` is ``exit`` (a ``-p`` run or the interactive session ended), ``clear`` (``/clear``)
    or ``resume`` (``/resume`` replaced it). The return value is ignored.
    """


@hookspec
def notification(message: str, kind: str, context: RunContext) -> None:
    """Observe, synchronously, that mycode is about to wait for the user (``message``).

    ``kind`` is ``permission_prompt`` (before an interactive permission question) or ``idle_prompt``
    (the prompt has waited idle after an answer). The return value is ignored.
    """


@hookspec
def plugin_details(settings: Any, workspace: Path, home: Path) -> dict[str, Any] | None:
    """Extra facts for ``mycode plugins``: ``{plugin_name: {key: JSON value}}`` or ``None``.

    Each mapping is merged into the row of the named plugin (e.g. what ``claude_compat`` loaded).
    The key ``folder_plugins`` is special: its list of objects adds one row per folder plugin (SPEC
    §11). ``settings`` are the workspace's merged settings, ``home`` is ``MYCODE_HOME``.
    """
