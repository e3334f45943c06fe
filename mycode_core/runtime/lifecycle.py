"""Calls of the lifecycle hooks (issue 12): session start/end, the user's prompt, tool
feedback and notifications. Every call goes through ``pm.hook``; a failing plugin costs one
notice, never the run.
"""

from __future__ import annotations

from typing import Any

import pluggy

from mycode_core.records import PromptVerdict, RunContext
from mycode_core.runtime import guarded
from mycode_core.runtime.guard import HookGuard
from mycode_core.runtime.hookcalls import OnError, call_hook, failure_notice
from mycode_core.runtime.messages import content_to_text


def _notice(context: RunContext, message: str) -> None:
    context.emit(failure_notice(message))


def _lines(results: Any) -> list[str]:
    lines: list[str] = []
    for item in results or ():
        if isinstance(item, str):
            item = [item]
        lines.extend(str(line) for line in item or () if str(line).strip())
    return lines


def with_reminders(text: str, lines: list[str]) -> str:
    """``text`` followed by each line as a ``<system-reminder>`` block."""
    if not lines:
        return text
    blocks = "\n\n".join(f"<system-reminder>{line}</system-reminder>" for line in lines)
    return f"{text}\n\n{blocks}" if text else blocks


def with_session_start(
    pm: pluggy.PluginManager,
    context: RunContext,
    source: str,
    prompt: str,
    on_error: OnError | None = None,
) -> str:
    """The system prompt with the ``session_start`` context lines pinned at its end (a
    failing plugin: one notice, and ``on_error`` is told)."""
    say = lambda message: _notice(context, message)  # noqa: E731
    found = call_hook(pm, "session_start", say, on_error=on_error, source=source, context=context)
    lines = _lines(found)
    if not lines:
        return prompt
    return prompt + "\n\n# Session start\n\n" + "\n\n".join(lines)


def prompt_verdict(guard: HookGuard, context: RunContext, prompt: str) -> PromptVerdict:
    """Every ``user_prompt_verdict`` combined into one: any block blocks, contexts add up (a
    failing plugin is left out, see :mod:`~mycode_core.runtime.guarded`)."""
    results = guarded.prompt_results(guard, prompt, context)
    combined = PromptVerdict()
    for verdict in results or ():
        if not isinstance(verdict, PromptVerdict):
            continue
        combined.context.extend(line for line in verdict.context if line.strip())
        if verdict.block and not combined.block:
            combined.block, combined.reason, combined.source = True, verdict.reason, verdict.source
    return combined


def tool_feedback(guard: HookGuard, context: RunContext, outcome: Any, content: Any) -> Any:
    """``content`` with the ``tool_result_verdict`` feedback lines appended (text)."""
    lines = _lines(guarded.feedback_results(guard, outcome, context))
    if not lines:
        return content
    return with_reminders(content_to_text(content), lines)


def session_end(
    pm: pluggy.PluginManager, context: RunContext, reason: str, on_error: OnError | None = None
) -> None:
    """Call ``session_end``; a failure is one notice (and ``on_error`` is told)."""
    say = lambda message: _notice(context, message)  # noqa: E731
    call_hook(pm, "session_end", say, on_error=on_error, reason=reason, context=context)


def notify(
    pm: pluggy.PluginManager,
    context: RunContext,
    message: str,
    kind: str,
    on_error: OnError | None = None,
) -> None:
    """Call ``notification`` before mycode waits for the user (failures: as ``session_end``)."""
    say = lambda line: _notice(context, line)  # noqa: E731
    call_hook(
        pm, "notification", say, on_error=on_error, message=message, kind=kind, context=context
    )
