"""``PreToolUse`` (and ``PermissionRequest``) hooks as a ``permission_verdict`` wrapper.

The hooks run first, so a rewritten input (``updatedInput``, checked against the tool's
schema) is what mycode's own permission rules then judge. Combining the two:

* the inner policy says ``deny`` (a user's deny rule, plan mode, the boundary) → deny, whatever
  the hook said;
* a hook says ``deny`` → deny, with the hook as rule and its source as layer;
* a hook says ``ask`` → ask (in ``-p``: deny);
* a hook says ``allow`` → allow, even where the rules would have asked;
* a hook crashed, timed out or printed invalid JSON → ask: a broken gate never silently
  allows a call (in ``-p`` the call is denied, saying which hook failed);
* no hook decided → the inner policy's verdict.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mycode_claude_compat.names import cc_input, cc_name, mycode_input
from mycode_claude_compat.protocol import Decision
from mycode_claude_compat.session import session_for
from mycode_core.api import INLINE_CALL_PREFIX


def _schema_problem(tool: Any, arguments: dict[str, Any]) -> str | None:
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(tool.input_schema)
        error = next(iter(cls(tool.input_schema).iter_errors(arguments)), None)
    except jsonschema.SchemaError:
        return None
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _run_hooks(call: Any, tool: Any, context: Any) -> tuple[Decision | None, Any]:
    """Fire ``PreToolUse``; returns the decision and the updated arguments (or ``None``)."""
    state = session_for(context)
    state.transcript.tool_use(call)
    name = cc_name(call.name)
    if not state.hooks.has("PreToolUse"):
        return None, None
    tool_input = cc_input(call.name, call.arguments, context.workspace)
    decision = state.fire(
        "PreToolUse",
        name,
        match_input=tool_input,
        tool_name=name,
        tool_input=tool_input,
        tool_use_id=call.id,
    )
    if decision is None:
        return None, None
    if decision.context:
        state.pending_context.setdefault(call.id, []).extend(decision.context)
    updated = None
    if decision.updated_input is not None and decision.permission != "deny":
        merged = {**tool_input, **decision.updated_input}
        updated = mycode_input(call.name, merged, context.workspace)
        problem = _schema_problem(tool, updated)
        if problem is not None:
            hook = decision.hook.label if decision.hook else "a PreToolUse hook"
            state.notice(f"PreToolUse: hook {hook} rewrote {name} into invalid input: {problem}")
            decision.permission = "deny"
            decision.reason = (
                f"a PreToolUse hook rewrote the {name} input into invalid arguments "
                f"({problem}); the call was not run"
            )
            updated = None
        else:
            problem = _apply(call, tool, updated, context)
            if problem is not None:
                decision.permission = "deny"
                decision.reason = f"a PreToolUse hook rewrote the {name} input: {problem}"
                updated = None
    return decision, updated


def _apply(call: Any, tool: Any, updated: dict[str, Any], context: Any) -> str | None:
    """Put the rewritten arguments on the call, paths resolved through the workspace boundary,
    so the inner policy judges the call that will run. Returns a refusal reason or ``None``."""
    from mycode_core.paths import BoundaryError, resolve_in_workspace

    paths = {}
    for argument, mode in (getattr(tool, "paths", None) or {}).items():
        raw = updated.get(argument)
        if raw is None:
            continue
        try:
            paths[argument] = resolve_in_workspace(raw, context, write=mode == "write")
        except BoundaryError as exc:
            return str(exc)
    call.arguments = dict(updated)
    call.paths.clear()
    call.paths.update(paths)
    return None


def _verdict(decision: str, reason: str, rule: str, layer: str, updated: Any) -> Any:
    from mycode_core.records import PermissionVerdict

    return PermissionVerdict(
        decision=decision,  # type: ignore[arg-type]
        reason=reason,
        rule=rule,
        layer=layer,
        updated_arguments=updated,
    )


def wrap(call: Any, tool: Any, context: Any) -> Generator[None, Any, Any]:
    """The body of the ``permission_verdict`` wrapper: ``PreToolUse``, then, when the call
    would ask, ``PermissionRequest``."""
    if call.id.startswith(INLINE_CALL_PREFIX):  # a command file's own command, no model's call
        return (yield)
    verdict = yield from _pre_tool_use(call, tool, context)
    if verdict is None or verdict.decision != "ask":
        return verdict
    try:
        return _permission_request(verdict, call, tool, context)
    except Exception as exc:  # noqa: BLE001 - a broken hook leaves the question as it was
        session_for(context).notice(f"PermissionRequest hooks failed: {exc}")
        return verdict


def _permission_request(verdict: Any, call: Any, tool: Any, context: Any) -> Any:
    """``PermissionRequest`` hooks answer the question the call would ask: allow or deny (a
    deny wins); no answer, or a failed hook, leaves the question to the user (``-p``: denied)."""
    state = session_for(context)
    if not state.hooks.has("PermissionRequest"):
        return verdict
    name = cc_name(call.name)
    tool_input = cc_input(call.name, call.arguments, context.workspace)
    decision = state.fire(
        "PermissionRequest", name, match_input=tool_input, tool_name=name, tool_input=tool_input
    )
    if decision is None or decision.failed is not None or decision.permission is None:
        return verdict
    hook = decision.hook
    rule = f"hook:PermissionRequest {hook.label}" if hook else "hook:PermissionRequest"
    layer = hook.layer if hook else "hooks"
    updated = verdict.updated_arguments
    if decision.permission == "allow" and decision.updated_input is not None:
        rewritten = mycode_input(
            call.name, {**tool_input, **decision.updated_input}, context.workspace
        )
        problem = _schema_problem(tool, rewritten) or _apply(call, tool, rewritten, context)
        if problem is not None:
            reason = f"a PermissionRequest hook rewrote the {name} input: {problem}"
            return _verdict("deny", reason, rule, layer, None)
        updated = rewritten
    return _verdict(decision.permission, decision.reason, rule, layer, updated)


def _pre_tool_use(call: Any, tool: Any, context: Any) -> Generator[None, Any, Any]:
    """``PreToolUse`` combined with the inner policy's verdict (see the module doc)."""
    try:
        decision, updated = _run_hooks(call, tool, context)
    except Exception as exc:  # noqa: BLE001 - a broken hook asks, it never crashes the run
        session_for(context).notice(f"PreToolUse hooks failed: {exc}")
        decision, updated = Decision(failed=None, problems=[str(exc)], permission="ask"), None
        decision.reason = f"the PreToolUse hooks failed ({exc})"
    inner = yield
    if decision is None:
        return inner
    if decision.stop is not None and decision.permission != "deny":
        decision.permission, decision.reason = "deny", f"stopped by a hook: {decision.stop}"
    if inner is not None and inner.decision == "deny":
        return inner
    hook = decision.hook or decision.failed
    rule = f"hook:PreToolUse {hook.label}" if hook else "hook:PreToolUse"
    layer = hook.layer if hook else "hooks"
    if decision.failed is not None and decision.permission != "deny":
        problems = "; ".join(decision.problems) or "a PreToolUse hook failed"
        return _verdict("ask", f"{problems} (asking instead)", rule, layer, updated)
    if decision.permission in ("deny", "ask", "allow"):
        if decision.permission == "allow" and not decision.reason:
            decision.reason = "allowed by a PreToolUse hook"
        return _verdict(decision.permission, decision.reason, rule, layer, updated)
    if updated is not None:
        if inner is None:
            return _verdict("allow", "input rewritten by a PreToolUse hook", rule, layer, updated)
        return inner.model_copy(update={"updated_arguments": updated})
    return inner
