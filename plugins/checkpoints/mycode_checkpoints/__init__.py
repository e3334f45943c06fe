"""mycode checkpoints: what each turn changed in the workspace, and undo (SPEC §12).

Loaded by default (entry point ``checkpoints``; off with ``MYCODE_DISABLE_PLUGINS=checkpoints``
or ``[checkpoints] enabled = false``). Driven by hooks only:

* ``user_prompt_verdict`` starts a turn (numbered per session, across resumed runs);
* ``permission_verdict`` (``tryfirst``, always answers ``None``) copies aside the files a
  call declares it writes, before it runs, and caches small files it reads;
* ``tool_result_verdict`` reads the call's observation (``mutated``: the core's change
  detection, so commands and plugin tools count too) and keeps what those files were before;
* ``register_commands`` adds ``mycode checkpoints`` and ``mycode undo``;
* ``register_slash_commands`` adds ``/undo``, ``/checkpoints``, ``/rewind`` and ``/diff``.

Modules: :mod:`.store` (the folders under ``MYCODE_HOME/checkpoints``), :mod:`.recorder`,
:mod:`.restore`, :mod:`.rewind`, :mod:`.commands`, :mod:`.slash`, :mod:`.settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mycode_core import hookimpl, subscribe

if TYPE_CHECKING:
    import click

    from mycode_core.records import (
        PermissionVerdict,
        PromptVerdict,
        RunContext,
        SlashCommand,
        Tool,
        ToolCall,
        ToolResult,
    )

__all__ = [
    "permission_verdict",
    "register_commands",
    "register_settings",
    "register_slash_commands",
    "on_event",
    "session_end",
    "tool_result_verdict",
    "user_prompt_verdict",
]


def _notice(context: RunContext, message: str) -> None:
    """One warning notice in the run's event stream."""
    from mycode_core.events import NoticeEvent

    context.emit(NoticeEvent(level="warning", message=message, source="checkpoints"))


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[checkpoints]`` config table so the core validates it."""
    from mycode_checkpoints.settings import CheckpointSettings

    register("checkpoints", CheckpointSettings)


@hookimpl
def user_prompt_verdict(prompt: str, context: RunContext) -> PromptVerdict | None:
    """A user turn begins: number it (a subagent's task is part of its parent's turn)."""
    if getattr(context, "agent_id", None) is None:
        from mycode_checkpoints.recorder import recorder_for

        recorder = recorder_for(context)
        while recorder.ignored:
            _notice(context, recorder.ignored.pop(0))
        recorder.start_turn(prompt)
    return None


@hookimpl(tryfirst=True)
def permission_verdict(call: ToolCall, tool: Tool, context: RunContext) -> PermissionVerdict | None:
    """Before a call runs: copy aside what it declares it writes (never decides anything)."""
    from mycode_checkpoints.recorder import recorder_for

    try:
        recorder_for(context).before_call(call, tool)
    except OSError as exc:  # a checkpoint problem never costs the call
        _notice(context, f"checkpoints: cannot save {call.name}'s files before it runs: {exc}")
    return None


@hookimpl
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """After a call: keep the previous content of every file it changed."""
    from mycode_checkpoints.recorder import recorder_for

    observation = None
    with context.lock:
        for item in reversed(context.observations):
            if item.call_id == call.id:
                observation = item
                break
    if observation is not None:
        try:
            for line in recorder_for(context).after_call(call, observation, context.prompt):
                _notice(context, line)
        except OSError as exc:
            _notice(context, f"checkpoints: cannot record what {call.name} changed: {exc}")
    return None


@hookimpl
@subscribe("permission")
def on_event(event: Any, context: RunContext) -> None:
    """A refused call never runs: it is not a call cut short by a killed run."""
    if getattr(event, "type", None) == "permission" and event.decision == "deny":
        from mycode_checkpoints.recorder import recorder_for

        recorder_for(context).call_ended(str(event.id))


@hookimpl
def session_end(reason: str, context: RunContext) -> None:
    """Drop the session's in-memory state and leftovers of calls."""
    if getattr(context, "agent_id", None) is None:
        from mycode_checkpoints.recorder import cleanup

        cleanup(context)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode checkpoints`` and ``mycode undo``."""
    from mycode_checkpoints.commands import make_commands

    for command in make_commands():
        cli.add_command(command)


@hookimpl
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """Add ``/undo``, ``/checkpoints``, ``/rewind`` and ``/diff`` to the interactive session."""
    from mycode_checkpoints.slash import commands

    for command in commands():
        register(command)
