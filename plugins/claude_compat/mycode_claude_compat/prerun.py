"""The shell commands of a command file, run before its prompt is sent, as Claude Code runs them.

Claude Code runs each ``!`cmd``` of a command's body (and each ```` ```! ```` block) when the
command is typed, and sends the prompt with the command's output in its place: the model never
sees the command, only what it printed (``/commit`` shows it ``git status``; ``/ralph-loop``
has written its state file before the first turn). Here each one is judged first as a
``run_command`` call by the run's permission policy, with the command file's ``allowed-tools``
granted (the user's deny and ask rules still win, plan mode denies), then run by the
``run_command`` tool itself, so the command sandbox applies. One that is not allowed refuses the
whole slash command, as Claude Code's "permission check failed": nothing is sent.
"""

from __future__ import annotations

import inspect
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from mycode_claude_compat.names import command_output, content_text

_RUN_MARK = re.compile(r"^```!\s*\n(?P<block>.*?)\n```[ \t]*$|!`(?P<inline>[^`\n]+)`", re.S | re.M)
"""``!`cmd``` inline, or a fenced block opened with ```` ```! ```` (Claude Code's two forms)."""
CALL_PREFIX = "cmdrun_"
"""Call ids of these runs: they are no model's tool calls, so no ``PreToolUse`` hook fires."""


class Refused(Exception):
    """A command of the file may not run; the message says which and why."""


@dataclass
class _Run:
    context: Any
    tool: Any
    rules: list[str]


def has_commands(text: str) -> bool:
    """Whether ``text`` holds a ``!`cmd``` or a ```` ```! ```` block."""
    return _RUN_MARK.search(text) is not None


def run_commands(text: str, context: Any, rules: list[str]) -> str:
    """``text`` with each command replaced by its output; raises :class:`Refused`.

    Every command is judged before any runs, so a refused one leaves nothing half done.
    ``rules`` are the command file's ``allowed-tools`` as mycode rules, granted while each
    command is judged."""
    tool = context.tools.get("run_command")
    if tool is None:
        raise Refused("it runs shell commands and this run has no run_command tool")
    run = _Run(context, tool, rules)
    commands = [_command(match) for match in _RUN_MARK.finditer(text)]
    allowed = {command: _allowed(run, command) for command in dict.fromkeys(commands)}
    outputs = {command: _run_one(run, arguments) for command, arguments in allowed.items()}
    return _RUN_MARK.sub(lambda match: outputs[_command(match)], text)


def _command(match: re.Match[str]) -> str:
    return (match.group("block") or match.group("inline") or "").strip()


def _run_one(run: _Run, arguments: dict[str, Any]) -> str:
    """The output of one allowed command, with its exit code when it failed."""
    result = run.tool.handler(arguments, run.context)
    if inspect.isawaitable(result):
        import asyncio

        result = asyncio.run(_awaited(result))
    text = content_text(getattr(result, "content", result))
    meta = getattr(result, "metadata", None) or {}
    output = command_output(text, meta).rstrip("\n")
    code = meta.get("exit_code")
    if isinstance(code, int) and code != 0:
        output = f"{output}\n(exit code {code})".lstrip("\n")
    return output


async def _awaited(result: Any) -> Any:
    return await result


def _allowed(run: _Run, command: str) -> dict[str, Any]:
    """The arguments to run ``command`` with, once the permission policy allows it."""
    from mycode_core.records import PermissionVerdict, ToolCall

    arguments: dict[str, Any] = {"command": command}
    context = run.context
    if context.permission_mode == "plan" and not run.tool.read_only:
        raise Refused(f"plan mode runs no shell command (`{command}`)")
    call = ToolCall(
        id=f"{CALL_PREFIX}{uuid.uuid4().hex[:12]}",
        name="run_command",
        arguments=arguments,
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )
    added = [rule for rule in dict.fromkeys(run.rules) if rule not in context.session_grants]
    context.session_grants.update(added)
    try:
        verdict = context.hook.permission_verdict(call=call, tool=run.tool, context=context)
    except Exception as exc:  # noqa: BLE001 - a failing policy never allows
        raise Refused(f"the permission check of `{command}` failed: {exc}") from exc
    finally:
        context.session_grants.difference_update(added)
    if isinstance(verdict, PermissionVerdict) and verdict.decision != "allow":
        reason = verdict.reason or verdict.rule or "not allowed"
        raise Refused(f"`{command}` is not allowed to run: {reason}")
    updated = getattr(verdict, "updated_arguments", None)
    return dict(updated) if isinstance(updated, dict) else arguments
