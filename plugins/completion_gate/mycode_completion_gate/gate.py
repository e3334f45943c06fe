"""The gate itself: pick the policy, gather the facts, return the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mycode_completion_gate import OUTPUTS_KEY, evidence, policies, project, requirements
from mycode_core.records import CompletionVerdict, Observation, RunContext

STORE_KEY = "completion_gate"


def policy_name(settings: Any) -> str:
    """The configured policy (``[completion_gate] policy`` / ``--completion-policy``)."""
    section = getattr(settings, "completion_gate", None)
    if isinstance(section, dict):
        value = section.get("policy")
    else:
        value = getattr(section, "policy", None)
    return str(value or "standard").strip().lower()


def _warn_unknown(context: RunContext, name: str) -> None:
    """Say once per run that no installed plugin provides policy ``name``."""
    state = context.store.setdefault(STORE_KEY, {})
    if state.get("warned") == name:
        return
    state["warned"] = name
    from mycode_core.events import NoticeEvent

    context.emit(
        NoticeEvent(
            level="warning",
            source=STORE_KEY,
            message=(
                f"completion gate policy {name!r} is not provided by any installed plugin; "
                f"using 'standard' (built-in policies: {', '.join(policies.POLICIES)})"
            ),
        )
    )


def verdict(
    final_text: str, observations: Sequence[Observation], context: RunContext
) -> CompletionVerdict:
    """Judge a final answer with the configured built-in policy."""
    name = policy_name(context.settings)
    if name not in policies.POLICIES:
        # We run last (trylast): reaching here means no plugin claimed this policy name.
        _warn_unknown(context, name)
        name = "standard"
    if name == "off":
        return policies.judge(
            "off",
            request=requirements.Request(),
            evidence=evidence.Evidence(),
            project=project.Project(),
            todos=[],
        )
    state = context.store.setdefault(STORE_KEY, {})
    result = policies.judge(
        name,
        request=requirements.parse_request(_said(context)),
        evidence=evidence.collect(
            observations, context.store.get(OUTPUTS_KEY), code_only=name != "strict"
        ),
        project=project.inspect(context.workspace),
        todos=requirements.unfinished_todos(context.store),
        told_no_tests=bool(state.get("told_no_tests")),
        can_run=_can_run_commands(context),
    )
    if result.verdict == "fail" and policies.NO_TESTS in result.missing:
        state["told_no_tests"] = True
    return result


def _can_run_commands(context: RunContext) -> bool:
    """Whether this agent can run a check at all: not in plan mode, and with a tool that is not
    read-only or that delegates (a read-only subagent profile such as ``explore`` has none)."""
    if context.permission_mode == "plan":
        return False
    tools = context.tools.all()
    if not tools:  # judged outside a run (no tools registered): assume it can
        return True
    return any(tool.name == "delegate_task" or not tool.read_only for tool in tools)


def _said(context: RunContext) -> str:
    """What the user asked in their own words: a plugin's slash command is the line typed
    (``/code-review``), not the instructions it expanded to, whose checklists and examples
    ("type errors", "Did you run tests?") are no request of the user's."""
    request = getattr(context, "request", None)  # a core older than ``RunContext.request``
    return request if isinstance(request, str) else context.prompt
