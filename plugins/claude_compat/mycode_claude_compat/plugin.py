"""The ``claude_compat`` plugin: Claude Code hooks and plugin folders on mycode's own hooks.

* ``PreToolUse`` → a ``permission_verdict`` wrapper (a user's deny still wins);
* ``PostToolUse``/``PostToolUseFailure`` → ``tool_result_verdict`` feedback;
* ``Stop``/``SubagentStop`` → a ``completion_verdict`` wrapper (fail with the reason);
* ``PreCompact``/``PostCompact`` → a ``compact_context`` wrapper (and ``summarize_context``);
* ``SessionStart``, ``UserPromptSubmit``, ``SessionEnd``, ``Notification`` → the lifecycle hooks
  of the same names;
* ``StopFailure`` → ``on_event`` (a ``result`` that ended on a model error);
* the project's ``CLAUDE.md`` files, ``.claude/rules/`` → ``build_context``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mycode_claude_compat import pretool
from mycode_claude_compat.names import cc_input, cc_name, cc_response
from mycode_claude_compat.session import session_for
from mycode_core import hookimpl, subscribe

if TYPE_CHECKING:
    from mycode_core.records import (
        CompletionVerdict,
        Observation,
        PermissionVerdict,
        PromptVerdict,
        RunContext,
        Tool,
        ToolCall,
        ToolResult,
    )

_STOP_SOURCE = "claude_code_hook"


@hookimpl(tryfirst=True)
def register_tools(register: Callable[[Any], None], context: RunContext) -> None:
    """Load the hooks and plugin folders of the run; hand plugin MCP servers to the bridge.
    The settings' ``env`` is applied now, before the bridge expands its servers' ``${VAR}``."""
    from mycode_claude_compat import settings_env
    from mycode_claude_compat.folders import mcp_config_file

    state = session_for(context)
    settings_env.apply(state.loaded.env, state.settings_env)
    files = getattr(context.settings, "mcp_config_files", None)
    for folder in state.loaded.folders:
        path = mcp_config_file(folder, context.home)
        if path is not None and isinstance(files, list) and str(path) not in files:
            files.append(str(path))


@hookimpl(wrapper=True)
def permission_verdict(
    call: ToolCall, tool: Tool, context: RunContext
) -> Generator[None, PermissionVerdict | None, PermissionVerdict | None]:
    """``PreToolUse`` hooks decide before the permission rules; see :mod:`.pretool`."""
    return (yield from pretool.wrap(call, tool, context))


@hookimpl
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """``PostToolUse`` (or ``PostToolUseFailure``) feedback for the model, also shown as a
    ``guidance`` event (source ``claude_code_hook``)."""
    state = session_for(context)
    state.transcript.tool_result(call, result)
    lines = state.pending_context.pop(call.id, [])
    name = cc_name(call.name)
    tool_input = cc_input(call.name, call.arguments, context.workspace)
    if result.is_error:
        decision = state.fire(
            "PostToolUseFailure",
            name,
            match_input=tool_input,
            tool_name=name,
            tool_input=tool_input,
            tool_use_id=call.id,
            error=result.text()[:20_000],
            is_interrupt=bool(result.metadata.get("timed_out")),
        )
    else:
        decision = state.fire(
            "PostToolUse",
            name,
            match_input=tool_input,
            tool_name=name,
            tool_input=tool_input,
            tool_use_id=call.id,
            tool_response=cc_response(call.name, call.arguments, result, context.workspace),
        )
    if decision is not None:
        if decision.block:
            by = decision.hook.label if decision.hook else "a hook"
            lines.append(f"PostToolUse hook {by} says: {decision.reason}")
        lines.extend(decision.context)
    lines.extend(state.take_rewakes())  # background hooks that finished meanwhile
    from mycode_core.events import GuidanceEvent

    if lines:  # the tool_result event shows the tool's own output: say what the hooks added
        context.emit(GuidanceEvent(source="claude_code_hook", message="\n".join(lines)))
    from mycode_claude_compat import nested, rules

    files = rules.touched_files(call.id, context.observations)
    if files:  # the CLAUDE.md of a sub-folder, and path-scoped rules, for those files
        found = nested.newly_applying(
            context.workspace, files, state.folders_seen, state.notice, context.settings
        )
        found += rules.newly_applying(state.rules, files, state.rules_shown)
        for text in found:
            context.emit(GuidanceEvent(source="claude_code_rules", message=text))
        lines += found
    return lines or None


@hookimpl(wrapper=True)
def completion_verdict(
    final_text: str, observations: list[Observation], context: RunContext
) -> Generator[None, CompletionVerdict | None, CompletionVerdict | None]:
    """``Stop``/``SubagentStop``: a block is a ``fail`` whose feedback is the hook's reason.

    The inner policy (the completion gate) speaks first: if it already fails the answer, the
    agent is not stopping and no Stop hook runs. ``max_steps`` bounds the blocks."""
    inner = yield
    if inner is not None and inner.verdict == "fail":
        return inner
    try:
        return _rewoken(context) or _stop_hooks(final_text, context) or inner
    except Exception as exc:  # noqa: BLE001 - a broken hook never breaks the run
        session_for(context).notice(f"Stop hooks failed: {exc}")
        return inner


def _rewoken(context: RunContext) -> CompletionVerdict | None:
    """``asyncRewake`` hooks still running when the model answers are waited for: the run
    would end before they could wake it. What one said keeps the agent going, as a Stop
    hook's block does."""
    from mycode_core.records import CompletionVerdict

    said = session_for(context).take_rewakes(wait=True)
    if not said:
        return None
    return CompletionVerdict(
        verdict="fail", feedback="\n\n".join(said), source=_STOP_SOURCE, counts=False
    )


def _stop_hooks(final_text: str, context: RunContext) -> CompletionVerdict | None:
    from mycode_core.records import CompletionVerdict

    state = session_for(context)
    state.transcript.assistant_text(final_text)
    fields: dict[str, Any] = {}
    if state.agent_id is not None:  # matched on the profile; its own transcript
        event, target = "SubagentStop", state.agent_type
        fields["agent_transcript_path"] = str(state.transcript.path)
    else:
        event, target = "Stop", ""
    decision = state.fire(
        event,
        target,
        stop_hook_active=state.stop_hook_active,
        last_assistant_message=final_text,
        **fields,
    )
    if decision is not None and decision.stop is not None:  # the run is stopping
        state.stop_hook_active = False
        return None
    if decision is None or not (decision.block or decision.context):
        # an interactive session's ``asyncRewake`` Stop hooks run in the background: the
        # answer waits for them too, and what one says keeps the agent going as a block does
        rewoken = _rewoken(context)
        state.stop_hook_active = rewoken is not None
        return rewoken
    state.stop_hook_active = True
    # a block's reason, or additionalContext (feedback that is not an error), keeps the agent
    # going; as in Claude Code the hook decides how long (``max_steps`` still ends the run)
    feedback = decision.reason if decision.block else "\n\n".join(decision.context)
    return CompletionVerdict(verdict="fail", feedback=feedback, source=_STOP_SOURCE, counts=False)


@hookimpl(wrapper=True)
def compact_context(
    messages: list[dict[str, Any]],
    budget: int,
    context: RunContext,
    reason: str,
    instructions: str | None,
    tokens: int,
) -> Generator[None, Any, Any]:
    """``PreCompact`` before any compaction policy, ``PostCompact`` after; see :mod:`.compact`.
    A batch offer below the threshold (old results masked, nothing summarised) runs neither."""
    from mycode_claude_compat import compact

    if reason == "proactive" and compact.below_threshold(tokens, budget, context):
        return (yield)
    return (yield from compact.wrap(context, reason, instructions))


@hookimpl(tryfirst=True)
def summarize_context(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    budget: int,
    context: RunContext,
) -> str | None:
    """PreCompact's added instructions (or its skip) reach the summariser; see :mod:`.compact`."""
    from mycode_claude_compat import compact

    return compact.summarize(messages, previous_summary, instructions, budget, context)


@hookimpl
def session_start(source: str, context: RunContext) -> list[str] | None:
    """``SessionStart``: plain stdout and ``additionalContext`` are pinned context, kept and
    on ``resume`` pinned again before what the resume hooks add (:mod:`.start_context`); what
    the hooks write to ``CLAUDE_ENV_FILE`` is the environment of later commands
    (:mod:`.envfile`)."""
    from mycode_claude_compat import binpath, envfile, settings_env, start_context
    from mycode_claude_compat.plugin_folder import open_data_dirs, protect_folders

    state = session_for(context)
    for line in [*protect_folders(state.loaded.folders, context),
                 *open_data_dirs(state.loaded.folders, context)]:  # fmt: skip
        state.notice(line)
    envfile.restore(state.settings_env)  # a /clear starts again from the same environment
    settings_env.apply(state.loaded.env, state.settings_env)
    # the Bash tool's session variable in Claude Code: a plugin's script can match its hooks'
    settings_env.apply({"CLAUDE_CODE_SESSION_ID": context.session_id}, state.settings_env)
    binpath.apply(state.loaded.folders, context, state.settings_env)
    kept = start_context.kept(context) if source == "resume" else []
    if not state.hooks.matching("SessionStart", source, None):
        return kept or None
    path = envfile.prepare(context)
    decision = state.fire(
        "SessionStart", source, extra_env={"CLAUDE_ENV_FILE": str(path)}, source=source
    )
    envfile.restore(state.saved_env)
    problem = envfile.apply(path, context.workspace, state.saved_env)
    if problem is not None:
        state.notice(problem)
    added = decision.context if decision is not None else []
    if source != "resume":  # startup, or the new session of a /clear
        start_context.keep(context, added, state.notice)
    return [*kept, *added] or None


@hookimpl
def user_prompt_verdict(prompt: str, context: RunContext) -> PromptVerdict | None:
    """``UserPromptExpansion`` when a slash command expanded (:mod:`.expansion`), then
    ``UserPromptSubmit``: block the prompt, or add context to it."""
    from mycode_claude_compat.expansion import expansion_input, this_turn

    state = session_for(context)
    state.command_grants.on_prompt(context.prompt, context.session_grants)
    state.stop_hook_active = False
    state.transcript.user(prompt)
    expanded, state.prompt_seen = this_turn(context.prompt, state.prompt_seen), len(context.prompt)
    fields = expansion_input(prompt, expanded, state.loaded.folders)
    found = state.fire("UserPromptExpansion", fields["command_name"], **fields) if fields else None
    verdict = _prompt_verdict(found, "UserPromptExpansion hook", [])
    if verdict is None or not verdict.block:
        submitted = state.fire("UserPromptSubmit", prompt=prompt)
        earlier = verdict.context if verdict is not None else []
        verdict = _prompt_verdict(submitted, "UserPromptSubmit hook", earlier) or verdict
    return verdict


def _prompt_verdict(decision: Any, source: str, earlier: list[str]) -> PromptVerdict | None:
    """The hooks' decision about a prompt as a verdict (after ``earlier`` context lines)."""
    from mycode_core.records import PromptVerdict

    if decision is None:
        return None
    block = decision.block or decision.stop is not None
    reason = decision.reason if decision.block else (decision.stop or "")
    context = [*earlier, *decision.context]
    return PromptVerdict(block=block, reason=reason, context=context, source=source)


@hookimpl
@subscribe("result")  # no other event reaches this observer's queue
def on_event(event: Any, context: RunContext) -> None:
    """``StopFailure`` when the main agent's turn ends on a model error (:mod:`.failure`)."""
    if event.stop_reason == "model_error" and not event.agent_id:
        from mycode_claude_compat.failure import stop_failure

        stop_failure(event, session_for(context))


@hookimpl
def session_end(reason: str, context: RunContext) -> None:
    """``SessionEnd`` with Claude Code's reasons (``clear``, ``prompt_input_exit``, ``other``)."""
    cc_reason = {"clear": "clear"}.get(
        reason, "prompt_input_exit" if context.interactive else "other"
    )
    state = session_for(context)
    state.fire("SessionEnd", cc_reason, reason=cc_reason)
    state.transcript.flush()
    from mycode_claude_compat import envfile

    envfile.finish(context, state.saved_env)
    envfile.restore(state.settings_env)  # after the env file's, which may have set the same


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[claude_compat]`` config table so the core validates it."""
    from mycode_claude_compat.settings import ClaudeCompatSettings

    register("claude_compat", ClaudeCompatSettings)


@hookimpl
def notification(message: str, kind: str, context: RunContext) -> None:
    """``Notification`` before mycode waits for the user."""
    session_for(context).fire("Notification", kind, message=message, notification_type=kind)


@hookimpl(optionalhook=True, tryfirst=True)
def register_slash_commands(register: Callable[[Any], None], context: RunContext) -> None:
    """Each plugin folder's ``commands/*.md`` as ``/plugin:name``, with ``/name`` an alias
    that yields to every command (the session's ``/help`` included) — first, so that alias
    still wins over a skill's ``/name`` (another alias)."""
    from mycode_claude_compat.slash import register_commands

    register_commands(register, session_for(context))


@hookimpl(optionalhook=True, trylast=True, specname="register_slash_commands")
def register_own_slash_commands(register: Callable[[Any], None], context: RunContext) -> None:
    """Your own and the workspace's commands (``.claude/commands/``...) — after every other
    plugin's, so a name one of them has (``/undo``) is never taken by a file."""
    from mycode_claude_compat.slash import register_own

    register_own(register, session_for(context))


@hookimpl(optionalhook=True)
def register_skills(register: Callable[..., None], context: RunContext) -> None:
    """Your ``~/.claude/skills/`` once ``user_claude_settings = true`` opts in (source
    ``claude``), then each plugin folder's ``skills/`` (folders with ``SKILL.md``), with the
    plugin's name and data folder (``${CLAUDE_PLUGIN_DATA}``).

    Claude Code and Codex treat a skill's ``name`` as a display name (``Plugin Settings``):
    their skills are registered with ``folder_names`` so they load as those hosts load them,
    under their folders' names. Agent Plugins folders are ``strict``: a skill not conforming
    to the Agent Skills specification is skipped (Agent Plugins §7.1).
    """
    from mycode_claude_compat.loading import user_claude
    from mycode_claude_compat.plugin_folder import data_dir

    if user_claude(context.settings):
        yours = Path.home() / ".claude" / "skills"
        _compatibly(register, yours, folder_names=True, source="claude")
    for folder in session_for(context).loaded.folders:
        portable = folder.format == "agent-plugins"
        for directory in folder.skill_dirs:
            _compatibly(
                register,
                directory,
                plugin=folder.name,
                root=folder.root,
                folder_names=not portable,
                strict=portable,
                data=data_dir(context.home, folder.name),
            )


def _compatibly(register: Callable[..., None], path: Path, **keywords: Any) -> None:
    """``register(path, **keywords)``; an older skills or subagents plugin that does not take
    the last keywords gets fewer (the later ones are the newer)."""
    names = list(keywords)
    while True:
        try:
            register(path, **keywords)
            return
        except TypeError:
            if not names:
                raise
            keywords.pop(names.pop())


@hookimpl(optionalhook=True)
def register_lsp_servers(register: Callable[..., None], context: RunContext) -> None:
    """Each plugin folder's ``lspServers`` (or ``.lsp.json``) for the ``lsp`` plugin."""
    for folder in session_for(context).loaded.folders:
        for name, entry in folder.lsp_servers.items():
            register(name, entry, plugin=folder.name)


@hookimpl(optionalhook=True)
def register_agent_profiles(register: Callable[..., None], context: RunContext) -> None:
    """Each plugin folder's ``agents/*.md`` as subagent profiles, with the folder's name
    (``feature-dev:code-reviewer`` and ``pr-review-toolkit:code-reviewer`` are two agents),
    root and data folder (``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}`` in their text)."""
    from mycode_claude_compat.plugin_folder import data_dir

    for folder in session_for(context).loaded.folders:
        data = data_dir(context.home, folder.name)
        for directory in folder.agent_dirs:
            _compatibly(register, directory, plugin=folder.name, root=folder.root, data=data)


@hookimpl
def plugin_details(settings: Any, workspace: Path, home: Path) -> dict[str, Any] | None:
    """The plugin folders and hook sources for ``mycode plugins``."""
    from mycode_claude_compat.install import skill_findings
    from mycode_claude_compat.loading import load

    loaded = load(workspace, home, settings)
    if any(folder.skill_dirs for folder in loaded.folders):
        from mycode_core.api import get_plugin_manager

        hook = get_plugin_manager(warn=lambda _line: None).hook  # the skills plugin's checks
        for folder in loaded.folders:
            folder.note_skill_findings(skill_findings(folder, hook))
    return {
        "claude_compat": {
            "trusted": loaded.trusted,
            "claude_hooks": loaded.hooks.summary() or "none",
            "plugin_folders": [folder.describe() for folder in loaded.folders],
            "notices": loaded.notices,
        },
        "folder_plugins": [  # type: ignore[dict-item]
            folder.listing_row() for folder in [*loaded.folders, *loaded.skipped]
        ],
    }


@hookimpl
def register_commands(cli: Any) -> None:
    """``mycode plugins validate|install|uninstall|update|trust`` (SPEC §11)."""
    from mycode_claude_compat.commands_cli import add_commands

    add_commands(cli)


@hookimpl(trylast=True, specname="build_context")
def project_instructions(context: RunContext) -> list[Any]:
    """The project's ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` from the
    workspace root down to the current folder, with their ``@path`` imports
    (:mod:`.instructions`): last, so they follow the core's AGENTS.md files."""
    from mycode_claude_compat import instructions

    return instructions.sections(context)


@hookimpl
def build_context(context: RunContext) -> list[Any] | None:
    """The rules of ``.claude/rules/`` that always apply (:mod:`.rules`); your
    ``~/.claude/CLAUDE.md``, once ``user_claude_settings = true`` opts in; in a subagent, what
    its ``SubagentStart`` hooks add (:mod:`.subagent_start`)."""
    from mycode_claude_compat import rules, subagent_start
    from mycode_claude_compat.loading import user_claude

    state = session_for(context)
    found: list[Any] = rules.sections(state.rules)
    found += subagent_start.sections(state)
    if not user_claude(context.settings):
        return found or None
    path = Path.home() / ".claude" / "CLAUDE.md"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:40_000]
    except OSError:
        return found or None
    from mycode_core import ContextSection

    found.append(ContextSection(title=f"Your instructions ({path})", text=text, priority=16))
    return found
