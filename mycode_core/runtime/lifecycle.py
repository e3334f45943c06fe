"""The hooks the loop calls at its decision points: the verdicts and transforms (failing closed
through the guard) and the lifecycle hooks (a failing plugin costs one notice, never the run)."""

from __future__ import annotations

from typing import Any

from mycode_core.records import RunContext, Tool, ToolCall, ToolResult
from mycode_core.runtime.hookcalls import HookGuard
from mycode_core.runtime.messages import content_to_text
from mycode_core.verdicts import (
    CompletionVerdict,
    PermissionVerdict,
    PromptVerdict,
    StagnationVerdict,
)


def _kind(kind: type) -> Any:
    return lambda value: value is None or isinstance(value, kind)


def _all(kind: type) -> Any:
    return lambda value: (
        isinstance(value, list) and all(item is None or isinstance(item, kind) for item in value)
    )


def permission(
    guard: HookGuard, call: ToolCall, tool: Any, context: RunContext
) -> PermissionVerdict | None:
    """The ``permission_verdict``; a failing plugin denies this call, naming the plugin."""
    asked = {"call": call, "tool": tool, "context": context}
    verdict, failed = guard.call("permission_verdict", _kind(PermissionVerdict), once=True, **asked)
    if not failed:
        return verdict  # type: ignore[no-any-return]
    plugin = failed[0]
    return PermissionVerdict(
        decision="deny",
        reason=(
            f"the permission policy of plugin {plugin!r} failed, so the call is denied "
            "(a failing permission policy denies every call it fails on)"
        ),
        rule=f"plugin:{plugin}",
        layer="plugin",
    )


def completion(guard: HookGuard, final_text: str, context: RunContext) -> CompletionVerdict:
    """The ``completion_verdict`` of the plugins that did not fail."""
    verdict, failed = guard.call(
        "completion_verdict",
        _kind(CompletionVerdict),
        final_text=final_text,
        observations=list(context.observations),
        context=context,
    )
    if "unknown" in failed:
        return CompletionVerdict(
            verdict="fail",
            source="runtime",
            feedback="A completion policy failed; verify the work (run the tests), then answer.",
        )
    if verdict is None and guard.skipped.get("completion_verdict"):
        return CompletionVerdict(verdict="unverified", source="runtime")  # never a plain pass
    return verdict or CompletionVerdict(verdict="pass", source="default")


def stagnation(guard: HookGuard, context: RunContext) -> StagnationVerdict | None:
    """The ``stagnation_verdict`` of the plugins that did not fail."""
    asked: dict[str, Any] = {"observations": context.observations, "context": context}
    verdict, _ = guard.call("stagnation_verdict", _kind(StagnationVerdict), **asked)
    return verdict  # type: ignore[no-any-return]


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


def with_session_start(guard: HookGuard, context: RunContext, source: str, prompt: str) -> str:
    """The system prompt with the ``session_start`` context lines pinned at its end."""
    lines = _lines(guard.observe("session_start", source=source, context=context))
    if not lines:
        return prompt
    return prompt + "\n\n# Session start\n\n" + "\n\n".join(lines)


def prompt_verdict(guard: HookGuard, context: RunContext, prompt: str) -> PromptVerdict:
    """Every ``user_prompt_verdict`` combined: any block blocks, contexts add up."""
    results, failed = guard.call(
        "user_prompt_verdict", _all(PromptVerdict), prompt=prompt, context=context
    )
    if "unknown" in failed:
        return PromptVerdict(block=True, reason="a prompt policy failed", source="runtime")
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
    asked = {"call": outcome.call, "tool": outcome.tool, "result": outcome.result}
    results, _ = guard.call(
        "tool_result_verdict", lambda value: isinstance(value, list), context=context, **asked
    )
    lines = _lines(results)
    if not lines:
        return content
    shown = bool(outcome.result.metadata.get("images_sent"))
    return with_reminders(content_to_text(content, shown), lines)


def notify(guard: HookGuard, context: RunContext, message: str, kind: str) -> None:
    """Call ``notification`` before mycode waits for the user."""
    guard.observe("notification", message=message, kind=kind, context=context)


def transform_tool_result(
    guard: HookGuard, call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> ToolResult:
    """The result after every ``transform_tool_result``, keeping the original's ``metadata``."""

    def problem(answer: Any) -> str | None:
        if not isinstance(answer, ToolResult):
            return f"returned {type(answer).__name__}, not a ToolResult or None"
        if answer.call_id is not None and answer.call_id != call.id:
            return f"returned the result of call {answer.call_id!r} for call {call.id!r}"
        return None

    asked = {"call": call, "tool": tool, "context": context}
    final: ToolResult = guard.chain("transform_tool_result", "result", result, problem, **asked)
    if final is result:
        return result
    return ToolResult(content=final.content, is_error=final.is_error, metadata=result.metadata)


def transform_system_prompt(guard: HookGuard, prompt: str, context: RunContext) -> str:
    """The system prompt after every ``transform_system_prompt``."""

    def problem(answer: Any) -> str | None:
        return None if isinstance(answer, str) else f"returned {type(answer).__name__}, not a str"

    return str(guard.chain("transform_system_prompt", "prompt", prompt, problem, context=context))
