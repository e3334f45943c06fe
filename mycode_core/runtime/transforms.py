"""The transform hooks, chained in pluggy's calling order: each implementation (called alone
through a subset caller) sees the previous result, ``None`` passes it on; a raising or
wrong-typed one is reported through the guard, skipped for the run, and the chain goes on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mycode_core.records import RunContext, Tool, ToolCall, ToolResult
from mycode_core.runtime.guard import HookGuard, discard
from mycode_core.runtime.hookcalls import is_plugin_failure


def _chain(
    guard: HookGuard,
    hook_name: str,
    key: str,
    value: Any,
    problem: Callable[[Any], str | None],
    **kwargs: Any,
) -> Any:
    impls = guard.implementations(hook_name)
    if not impls:
        return value  # the common case: no implementation, no cost
    pm = guard.pm
    for impl in impls:
        if impl.plugin_name in guard.skipped.get(hook_name, ()):
            continue
        others = [i.plugin for i in getattr(pm.hook, hook_name).get_hookimpls() if i is not impl]
        caller = pm.subset_hook_caller(hook_name, remove_plugins=others)
        try:
            answers = caller(**{key: value}, **kwargs)
        except BaseException as exc:
            if not is_plugin_failure(exc):
                raise
            text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            guard.fail(hook_name, impl.plugin_name, text)
            continue
        answer = answers[0] if isinstance(answers, list) and answers else None
        if answer is None:
            continue
        why = problem(answer)
        if why is not None:
            discard(answer)
            guard.fail(hook_name, impl.plugin_name, why)
            continue
        value = answer
    return value


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

    final: ToolResult = _chain(
        guard,
        "transform_tool_result",
        "result",
        result,
        problem,
        call=call,
        tool=tool,
        context=context,
    )
    if final is result:
        return result
    return ToolResult(content=final.content, is_error=final.is_error, metadata=result.metadata)


def transform_system_prompt(guard: HookGuard, prompt: str, context: RunContext) -> str:
    """The system prompt after every ``transform_system_prompt``."""

    def problem(answer: Any) -> str | None:
        return None if isinstance(answer, str) else f"returned {type(answer).__name__}, not a str"

    return str(_chain(guard, "transform_system_prompt", "prompt", prompt, problem, context=context))
