"""The verdict hooks, each called through :class:`~mycode_core.runtime.guard.HookGuard`.

What failing closed means for each: a failed ``permission_verdict`` denies that call (its
result names the plugin); a failed ``completion_verdict`` is left out and the others decide
(the built-in gate still blocks; with none left able to judge, the answer is ``fail``);
``stagnation_verdict`` and ``user_prompt_verdict`` go on without the failing plugin.
"""

from __future__ import annotations

from typing import Any

from mycode_core.records import RunContext, ToolCall
from mycode_core.runtime.guard import HookGuard
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
    verdict, failed = guard.call(
        "permission_verdict", _kind(PermissionVerdict), call=call, tool=tool, context=context
    )
    if not failed:
        return verdict  # type: ignore[no-any-return]
    plugin = failed[0]
    return PermissionVerdict(
        decision="deny",
        reason=(
            f"the permission policy of plugin {plugin!r} failed, so the call is denied "
            "(the plugin is skipped for the rest of the run)"
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
    verdict, _ = guard.call(
        "stagnation_verdict",
        _kind(StagnationVerdict),
        observations=context.observations,
        context=context,
    )
    return verdict  # type: ignore[no-any-return]


def prompt_results(guard: HookGuard, prompt: str, context: RunContext) -> list[Any]:
    """Every ``user_prompt_verdict`` answer; an unnamed failure blocks the prompt."""
    results, failed = guard.call(
        "user_prompt_verdict", _all(PromptVerdict), prompt=prompt, context=context
    )
    if "unknown" in failed:
        return [PromptVerdict(block=True, reason="a prompt policy failed", source="runtime")]
    return list(results or ())


def feedback_results(guard: HookGuard, outcome: Any, context: RunContext) -> list[Any]:
    """Every ``tool_result_verdict`` answer of the plugins that did not fail."""
    results, _ = guard.call(
        "tool_result_verdict",
        lambda value: isinstance(value, list),
        call=outcome.call,
        tool=outcome.tool,
        result=outcome.result,
        context=context,
    )
    return list(results or ())
