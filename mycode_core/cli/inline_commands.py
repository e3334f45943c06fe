"""The shell commands of a command file or skill, run before its text is sent, as Claude Code
runs them.

Claude Code runs each ``!`cmd``` of a command's or skill's text (and each ```` ```! ````
block) when it is invoked, and sends the text with the command's output in its place: the model
never sees the command, only what it printed (``/commit`` shows it ``git status``;
``/ralph-loop`` has written its state file before the first turn). Here each one is judged first
as a ``run_command`` call by the run's permission policy, with the caller's ``granted`` rules
added for the judgement (the user's deny and ask rules still win, plan mode denies), then run by
the ``run_command`` tool itself, so the command sandbox applies. One that is not allowed refuses
the whole text, as Claude Code's "permission check failed": nothing runs.

Unlike Claude Code, a ``!`cmd``` shown as an example is not run: inside a fenced code block
(```` ```markdown ````) or inside an inline code span (`` `!` ``). Skills that teach the syntax
(plugin-dev's ``command-development``) load without running their examples.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Iterable
from typing import Any

from mycode_core.records import PermissionVerdict, ToolCall, ToolResult

_INLINE = re.compile(r"!`([^`\n]+)`")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
INLINE_CALL_PREFIX = "cmdrun_"
"""Call ids of these runs: they are no model's tool calls (a ``PreToolUse`` hook skips them)."""
_ENDINGS = ("\nkilled by signal ", "\nCommand timed out after ", "\nInterrupted by the user")


class InlineCommandRefused(Exception):
    """A command of the text may not run; the message says which and why."""


def run_inline_commands(text: str, context: Any, granted: Iterable[str] = ()) -> str:
    """``text`` with each command replaced by its output (``text`` itself when it has none);
    raises :class:`InlineCommandRefused`.

    Every command is judged before any runs, so a refused one leaves nothing half done.
    ``granted`` are permission rules (``run_command(git status:*)``) allowed while each command
    is judged: a command file's ``allowed-tools``."""
    marks = _marks(text)
    if not marks:
        return text
    tool = context.tools.get("run_command")
    if tool is None:
        raise InlineCommandRefused("it runs shell commands and this run has no run_command tool")
    rules = list(dict.fromkeys(granted))
    commands = dict.fromkeys(command for _, _, command in marks)
    allowed = {command: _allowed(tool, context, command, rules) for command in commands}
    outputs = {command: _output(tool, context, arguments) for command, arguments in allowed.items()}
    pieces, at = [], 0
    for start, end, command in marks:
        pieces += [text[at:start], outputs[command]]
        at = end
    return "".join([*pieces, text[at:]])


def _marks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, command)`` of each command to run: a ``!`cmd``` outside code, and each
    block fenced with ```` ```! ```` (Claude Code's two forms)."""
    marks: list[tuple[int, int, str]] = []
    fence: tuple[str, int, bool] | None = None  # its marker, where it starts, whether it runs
    at = 0
    for line in text.splitlines(keepends=True):
        start, at = at, at + len(line)
        bare = line.rstrip("\r\n")
        opened = _FENCE.fullmatch(bare)
        if opened and opened.group(1)[0] == "`" and "`" in opened.group(2):
            opened = None  # ```a``` is code inside a line, not a fence (CommonMark)
        if fence is None and opened:
            marker, info = opened.groups()
            fence = (marker, start, marker == "```" and info.strip() == "!")
        elif fence is not None:
            marker, begin, runs = fence
            if opened and opened.group(1).startswith(marker) and not opened.group(2).strip():
                body = text[text.index("\n", begin) + 1 : start]
                marks += [(begin, start + len(bare), body.strip())] if runs else []
                fence = None
        else:
            marks += [
                (start + match.start(), start + match.end(), match.group(1).strip())
                for match in _INLINE.finditer(line)
                if line[: match.start()].count("`") % 2 == 0  # not inside a `code span`
            ]
    return [mark for mark in marks if mark[2]]


def _output(tool: Any, context: Any, arguments: dict[str, Any]) -> str:
    """What one allowed command printed (without ``run_command``'s closing line), with its exit
    code when it failed and the notes the tool added (a file the sandbox took back)."""
    result = tool.handler(arguments, context)
    if inspect.isawaitable(result):
        import asyncio  # only for a plugin's async run_command: ~30 ms on every start-up else

        result = asyncio.run(_awaited(result))
    metadata = getattr(result, "metadata", None) or {}
    printed = result.text() if isinstance(result, ToolResult) else str(result)
    text, notes = _split_output(printed, metadata)
    code = metadata.get("exit_code")
    if isinstance(code, int) and code != 0:
        text = f"{text.rstrip()}\n(exit code {code})".lstrip("\n")
    # what the tool noted after the closing line (a file the sandbox took back, processes
    # stopped): without it a command that silently lost its work looks like it worked
    return "\n".join([text.rstrip("\n"), *notes]).strip("\n")


def command_output(text: str, metadata: dict[str, Any]) -> str:
    """A ``run_command`` result's text as the command printed it: without the line the tool
    adds for the model (``exit code: 0``, a timeout, a signal) and the notes after it, and
    empty for ``(no output)``. A result without ``exit_code`` (another plugin's
    ``run_command``) is taken as it is."""
    return _split_output(text, metadata)[0]


def _split_output(text: str, metadata: dict[str, Any]) -> tuple[str, list[str]]:
    """``(what the command printed, the notes after the tool's closing line)``: see
    :func:`command_output`; each note is one line."""
    code = metadata.get("exit_code")
    if not isinstance(code, int):
        return text, []
    notes: list[str] = []
    for ending in (f"\nexit code: {code}", *_ENDINGS):
        output, found, rest = text.rpartition(ending)
        if found:
            text = output
            notes = [line for line in rest.split("\n")[1:] if line.strip()]
            break
    return ("" if text == "(no output)" else text), notes


async def _awaited(result: Any) -> Any:
    return await result


def _allowed(tool: Any, context: Any, command: str, rules: list[str]) -> dict[str, Any]:
    """The arguments to run ``command`` with, once the permission policy allows it."""
    arguments: dict[str, Any] = {"command": command}
    if context.permission_mode == "plan" and not tool.read_only:
        raise InlineCommandRefused(f"plan mode runs no shell command (`{command}`)")
    call = ToolCall(
        id=f"{INLINE_CALL_PREFIX}{os.urandom(6).hex()}",
        name="run_command",
        arguments=arguments,
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )
    added = [rule for rule in rules if rule not in context.session_grants]
    context.session_grants.update(added)
    try:
        verdict = context.hook.permission_verdict(call=call, tool=tool, context=context)
    except Exception as exc:  # noqa: BLE001 - a failing policy never allows
        raise InlineCommandRefused(f"the permission check of `{command}` failed: {exc}") from exc
    finally:
        context.session_grants.difference_update(added)
    if isinstance(verdict, PermissionVerdict) and verdict.decision != "allow":
        reason = verdict.reason or verdict.rule or "not allowed"
        raise InlineCommandRefused(f"`{command}` is not allowed to run: {reason}")
    updated = getattr(verdict, "updated_arguments", None)
    return dict(updated) if isinstance(updated, dict) else arguments
