"""The hook specifications: everything a mycode plugin can contribute or decide.

Hooks are synchronous (pluggy calls are plain function calls, keyword-only). A plugin that
needs asyncio or anyio runs its own loop in a background thread (the MCP bridge does).

Families:

* ``register_*`` — contribute things by calling the ``register`` callback; return nothing.
* ``build_context`` — contribute sections of the system prompt.
* ``*_verdict`` — policies: ``firstresult=True``; return a verdict, or ``None`` to pass the
  decision on. The built-in default of each is registered first and marked ``trylast``.
* ``compact_context`` — shrink the model view when it no longer fits.
* ``on_event`` — observe every event of the stream.
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
    """Add hookspecs of your own plugin, so other plugins can implement them.

    Called once for every plugin as it is registered (a historic hook). Call
    ``pluginmanager.add_hookspecs(module_or_class)``; call your hooks through pluggy with
    ``context.hook.<name>(...)``. Implementations of hooks that may be absent (another
    plugin's) are marked ``@hookimpl(optionalhook=True)``.

    :param pluginmanager: the :class:`pluggy.PluginManager` being built.
    """


@hookspec
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Contribute tools the model can call.

    Called once per run, before the first model request. Call ``register(tool)`` for each tool
    (usually a function decorated with :func:`mycode_core.tool`, or a hand-written
    :class:`~mycode_core.records.Tool`). Tool names must match ``^[a-zA-Z0-9_-]{1,64}$`` and be
    unique across plugins; a duplicate is an error naming both plugins.

    :param register: callback taking a :class:`mycode_core.records.Tool`.
    :param context: the run's :class:`~mycode_core.records.RunContext` (workspace, settings).
    """


@hookspec
def register_models(register: Callable[[ModelProvider], None]) -> None:
    """Contribute model providers.

    Call ``register(ModelProvider(prefix="name", factory=...))``; ``--model name:rest`` then
    selects it. A model id without a registered prefix goes to the OpenAI-compatible provider.

    :param register: callback taking a :class:`mycode_core.records.ModelProvider`.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``mycode`` command line.

    Called when the CLI is built. Use ``@cli.command()`` to add commands. Keep imports of heavy
    libraries inside the command functions so ``mycode --help`` stays fast.

    :param cli: the top-level :class:`click.Group`.
    """


@hookspec
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """Contribute ``/name`` commands to the interactive session (and ``mycode -p "/name"``).

    Called once per session. Call ``register(SlashCommand(name=..., run=fn))``;
    ``fn(args, context)`` returns a :class:`~mycode_core.records.SlashResult`, a prompt string
    to run as the user's turn, or ``None``. A command registered with ``alias_of="other"`` is
    a short name that yields: kept only if no built-in and no other command has its name.

    :param register: callback taking a :class:`mycode_core.records.SlashCommand`.
    :param context: the session's :class:`~mycode_core.records.RunContext`.
    """


@hookspec
def build_context(context: RunContext) -> list[ContextSection] | None:
    """Contribute sections to the system prompt the model sees.

    Called when a run starts (``context.prompt`` already holds the first task) and again
    before each later turn of the session, so a section may change between turns (new
    skills); return the same text when nothing changed, so the prompt prefix stays cacheable.
    Return a list of :class:`~mycode_core.records.ContextSection` (ordered by ``priority``,
    lower first), plain strings, or ``None``. Results of all plugins are combined; a
    ``wrapper=True`` implementation sees (and returns) one flat list of them.

    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """


@hookspec(firstresult=True)
def permission_verdict(call: ToolCall, tool: Tool, context: RunContext) -> PermissionVerdict | None:
    """Decide whether a tool call may run: ``allow``, ``deny`` or ``ask``.

    Called before every tool call. Stops at the first non-``None`` result. The built-in default
    (plugin ``builtin_tools``, ``trylast``) applies the permission rules and modes; without it,
    everything is allowed. In ``-p`` mode an ``ask`` becomes a denial; interactively the user is
    asked.

    :param call: the :class:`~mycode_core.records.ToolCall` with parsed arguments.
    :param tool: the :class:`~mycode_core.records.Tool` it targets.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: a :class:`~mycode_core.records.PermissionVerdict` or ``None``.
    """


@hookspec(firstresult=True)
def stagnation_verdict(
    observations: list[Observation], context: RunContext
) -> StagnationVerdict | None:
    """Judge whether the agent is going round in circles.

    Called after every batch of tool calls with all observations of the run so far. Stops at
    the first non-``None`` result. The core's default policy (``trylast``) detects repeated
    calls, repeated results, repeated resources and A-B-A-B alternation.

    :param observations: every :class:`~mycode_core.records.Observation` of this run, in order.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: a :class:`~mycode_core.records.StagnationVerdict` (``continue``, ``guide``,
        ``stop``) or ``None``.
    """


@hookspec(firstresult=True)
def completion_verdict(
    final_text: str, observations: list[Observation], context: RunContext
) -> CompletionVerdict | None:
    """Judge a final answer: is the work verified done?

    Called when the model answers without tool calls. Stops at the first non-``None`` result;
    a ``wrapper=True`` implementation may veto what the inner verdict said. Without any plugin
    the verdict is ``pass``. ``fail`` sends the feedback to the model as guidance (bounded).
    With ``--completion-policy off`` (``[completion_gate] policy = "off"``) no implementation
    is called at all.

    :param final_text: the model's final text.
    :param observations: every :class:`~mycode_core.records.Observation` of this run.
    :param context: the run's :class:`~mycode_core.records.RunContext` (``context.store``
        holds e.g. the todo list).
    :return: a :class:`~mycode_core.records.CompletionVerdict` or ``None``.
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
    """Shrink the model view when it no longer fits, or when asked to.

    Called when the view passes the proactive threshold of the budget (``[context]
    compact_threshold``, reason ``proactive``; with a ``mask`` strategy also below it every
    ``keep_recent_results`` new tool results, to mask old ones in a batch: ``None`` if there
    is nothing to do), after the provider reported a context-length error (``reactive``,
    ``budget`` lowered to the learned limit), or on ``/compact`` (``manual``, with the
    user's ``instructions``). Stops at the first non-``None`` result: the new messages (the
    system message first) or a :class:`~mycode_core.records.CompactedView` (with the
    summary). Return ``None`` to pass. The ``context_engine`` plugin masks and summarises;
    the default (``trylast``) keeps the system prompt, the first user turn and recent turns.
    A ``wrapper=True`` implementation may *veto* by returning ``None`` from ``yield`` (the
    view is sent unchanged; if it cannot fit, the run ends with ``context_overflow``). Raise
    ``mycode_core.api.ContextOverflow`` to end the run saying what is too big (history stays).

    :param messages: the current model view (system message first).
    :param budget: the token budget the result should fit (window minus output reserve).
    :param context: the run's :class:`~mycode_core.records.RunContext` (``pins``,
        ``observations``, ``store["todos"]``, ``side_request``).
    :param reason: ``proactive``, ``reactive`` or ``manual``.
    :param instructions: what the user asked ``/compact`` to focus on, or ``None``.
    :param tokens: the core's count of ``messages``, in the units of ``budget`` (known
        without counting: below the threshold, ``tokens <= budget * compact_threshold``).
    """


@hookspec
def on_event(event: AgentEvent, context: RunContext) -> None:
    """Observe every event of the stream (SPEC §4), in order.

    Observers run off the loop's thread (one worker per plugin, events in order), so a slow
    observer never slows the run; one slower than ``observer_warn_ms`` gets one notice. To be
    called only for some event types, decorate the implementation with
    ``@mycode_core.subscribe("tool_result", "result")``. The return value is ignored;
    exceptions are reported once as a notice and do not stop the run. Observers have seen every
    event of a run before ``mycode`` exits.

    :param event: the :class:`~mycode_core.events.AgentEvent`.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """


# --- issue 9: context engine ------------------------------------------------------------------


@hookspec(firstresult=True)
def summarize_context(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    budget: int,
    context: RunContext,
) -> str | None:
    """Write the summary of older turns a compaction replaces.

    Called by the ``context_engine`` plugin's compaction with the messages being replaced
    (never the system message). Stops at the first non-``None`` result. The plugin's default
    (``trylast``) asks the model in a side request without tools for a structured summary
    (goal, constraints, progress, decisions, open items, next steps) that folds in
    ``previous_summary``. Return ``""`` to use only the runtime's recorded facts. The engine
    appends those facts (files read and changed, test results, the todo list) and the pins
    itself, whatever the summary says.

    :param messages: the chat messages being summarised away, oldest first.
    :param previous_summary: the summary of the previous compaction, or ``None``.
    :param instructions: the user's ``/compact`` instructions, or ``None``.
    :param budget: the view's token budget; a side request must fit it, and the summary
        should stay well under it (the default aims at 15%).
    :param context: the run's :class:`~mycode_core.records.RunContext` (``side_request``).
    :return: the summary text, or ``None`` to pass.
    """


@hookspec(firstresult=True)
def view_message(
    message: dict[str, Any], budget: int, context: RunContext
) -> dict[str, Any] | None:
    """Give the form a history message takes in the model view.

    Called once per message, when it enters history (and again on ``--resume``), so the
    result must depend only on the message and ``budget``. Stops at the first non-``None``
    result; ``None`` sends the message as it is. History keeps the original. The
    ``context_engine`` plugin turns a big tool result into head + tail + the path of the full
    output, and elides huge tool-call arguments.

    :param message: the chat-completions message as history holds it (do not change it).
    :param budget: the view's token budget when the message entered.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: a new message dict, or ``None``.
    """


# --- issue 14: configuration tables of plugins ----------------------------------------------


@hookspec
def register_settings(register: Callable[[str, type[BaseModel]], None]) -> None:
    """Contribute the schema of a plugin's own config table.

    Call ``register(name, model)`` with the table name (``[name]`` in ``config.toml``) and a
    pydantic model class of it. Before a run, the core validates the table of every config
    layer against the model: a bad value is a one-line configuration error naming the file,
    the key and what is expected (exit code 2); a key the model does not know gets a warning
    with a did-you-mean (unless the model allows extra keys). Read the values as before,
    with ``settings.section(name)``. Called once per run, before the run starts.

    :param register: ``register(name, model)``.
    """


# ---------------------------------------------------------------- issue 12: lifecycle points
# Synchronous points of the loop that external hook protocols (Claude Code hooks) need. Each is
# called through ``pm.hook`` by the core; exceptions are reported as one notice.


@hookspec
def session_start(source: str, context: RunContext) -> list[str] | None:
    """Contribute context lines when a session starts; they are pinned in the system prompt.

    Called once when a runner is prepared, before the first model request. ``source`` is
    ``startup`` (a new session), ``resume`` (``--resume``/``--continue``/``/resume``) or
    ``clear`` (``/clear`` in an interactive session). Results of all plugins are combined.

    :param source: why the session starts.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: lines of text for the model, or ``None``.
    """


@hookspec
def user_prompt_verdict(prompt: str, context: RunContext) -> PromptVerdict | None:
    """Judge the user's prompt before the model sees it: block it or add context.

    Called for every user turn, before it enters the history. Results of all plugins are
    combined: any ``block`` drops the prompt (the turn ends with ``stop_reason``
    ``interrupted`` and the reason as its error); every ``context`` line is appended to the
    prompt the model sees.

    :param prompt: the user's text, as typed.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: a :class:`~mycode_core.records.PromptVerdict` or ``None``.
    """


@hookspec
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """React to a finished tool call: add feedback the model sees with its result.

    Called after each executed tool call (successful or failed), in call order, before the
    results are sent to the model. Results of all plugins are combined; each line is appended
    to the tool result the model sees (the ``tool_result`` event keeps the tool's own output).

    :param call: the :class:`~mycode_core.records.ToolCall` as it ran.
    :param tool: the :class:`~mycode_core.records.Tool` it ran.
    :param result: the :class:`~mycode_core.records.ToolResult`.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: feedback lines, or ``None``.
    """


@hookspec
def transform_tool_result(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> ToolResult | None:
    """Replace a tool's result before the model sees it (e.g. redact secrets).

    Called for every answered call, successes and failures (denied, unknown tool, crashed),
    chained in plugin order: each implementation gets the previous one's result; return a
    :class:`~mycode_core.records.ToolResult` to replace it or ``None`` to pass. The model
    sees the last result; the ``tool_result`` event carries it as ``content`` and the tool's
    own ``content``/``is_error`` as ``original``. The runtime's facts (``metadata``) stay the
    tool's. A result with ``call_id`` set must name this call. Raising, or answering with
    anything else, skips the implementation for the rest of the run (one notice).

    :param call: the :class:`~mycode_core.records.ToolCall` answered.
    :param tool: its :class:`~mycode_core.records.Tool` (``None`` for an unknown tool).
    :param result: the :class:`~mycode_core.records.ToolResult` so far.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: a replacement ``ToolResult``, or ``None``.
    """


@hookspec
def transform_system_prompt(prompt: str, context: RunContext) -> str | None:
    """Rewrite the system prompt built from every ``build_context`` section (e.g. a team
    persona). Chained in plugin order like ``transform_tool_result``; return the new text
    or ``None`` to pass. Called when the prompt is built and again when it is refreshed
    between turns.

    :param prompt: the system prompt so far.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    :return: the new prompt, or ``None``.
    """


@hookspec
def session_end(reason: str, context: RunContext) -> None:
    """Observe the end of a session (the runner is closed).

    Called once, synchronously, when the runner closes. ``reason`` is ``exit`` (``-p`` run or
    the interactive session ended), ``clear`` (``/clear``) or ``resume`` (``/resume`` replaced
    it). Return value is ignored.

    :param reason: why the session ends.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """


@hookspec
def notification(message: str, kind: str, context: RunContext) -> None:
    """Observe, synchronously, that mycode is about to wait for the user.

    Called before an interactive permission question is shown (``kind`` ``permission_prompt``)
    and when the prompt has waited idle after an answer (``idle_prompt``). Return ignored.

    :param message: what the user is asked.
    :param kind: what kind of notification it is.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """


@hookspec
def plugin_details(settings: Any, workspace: Path, home: Path) -> dict[str, Any] | None:
    """Extra facts for ``mycode plugins``: ``{plugin_name: {key: JSON value}}``.

    Called by ``mycode plugins``; each returned mapping is merged into the row of the named
    plugin (e.g. the Claude Code plugin folders ``claude_compat`` loaded and what each
    contributed). The key ``folder_plugins`` is special: its value, a list of objects, adds
    one row per folder plugin to the listing (SPEC §11).

    :param settings: the merged settings of the workspace.
    :param workspace: the workspace folder.
    :param home: ``MYCODE_HOME``.
    :return: a mapping from plugin name to extra JSON fields, or ``None``.
    """
