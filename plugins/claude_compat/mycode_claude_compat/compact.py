"""``PreCompact`` and ``PostCompact`` around mycode's ``compact_context`` and ``summarize_context``.

``PreCompact`` runs before a compaction (``trigger`` ``manual`` for ``/compact``, else ``auto``).
Exit 2 or ``decision: "block"`` skips a proactive or manual compaction (never a reactive one:
the view no longer fits). Its ``additionalContext`` (or plain stdout) is added to the summary's
instructions. ``PostCompact`` runs after, with ``compact_summary``; a
``hookSpecificOutput.compactSummary`` string replaces the summary in the view.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from mycode_claude_compat.session import session_for

if TYPE_CHECKING:
    from mycode_core.records import CompactedView, RunContext

_SKIP = "claude_compat.compact_skip"
_EXTRA = "claude_compat.compact_instructions"
_INNER = "claude_compat.summarizing"

View = list[dict[str, Any]] | Any


def below_threshold(tokens: int, budget: int, context: RunContext) -> bool:
    """Whether a proactive call is the core's batch offer (the view's ``tokens`` under the
    threshold)."""
    threshold = getattr(getattr(context.settings, "context", None), "compact_threshold", 0)
    return tokens <= budget * float(threshold or 0)


def wrap(
    context: RunContext, reason: str, instructions: str | None
) -> Generator[None, View | None, View | None]:
    """The ``compact_context`` wrapper: PreCompact, the compaction, then PostCompact."""
    state = session_for(context)
    trigger = "manual" if reason == "manual" else "auto"
    try:
        decision = state.fire(
            "PreCompact", trigger, trigger=trigger, custom_instructions=instructions or ""
        )
    except Exception as exc:  # noqa: BLE001 - a broken hook never breaks the run
        state.notice(f"PreCompact hooks failed: {exc}")
        decision = None
    skip = decision is not None and decision.block and reason != "reactive"
    if skip and decision is not None:
        state.notice(f"PreCompact hook skipped this compaction: {decision.reason}", level="info")
        context.store[_SKIP] = True  # the summariser answers "" (no summary request)
    elif decision is not None and decision.context:
        context.store[_EXTRA] = "\n".join(decision.context)
    try:
        result = yield
    finally:
        context.store.pop(_SKIP, None)
        context.store.pop(_EXTRA, None)
    if skip or result is None:
        return None
    return _post(context, trigger, result)


def _post(context: RunContext, trigger: str, result: View) -> View:
    """Run ``PostCompact``; put a hook's replacement summary into the view."""
    state = session_for(context)
    summary = getattr(result, "summary", None)
    try:
        decision = state.fire(
            "PostCompact", trigger, trigger=trigger, compact_summary=summary or ""
        )
    except Exception as exc:  # noqa: BLE001
        state.notice(f"PostCompact hooks failed: {exc}")
        return result
    new = decision.summary if decision is not None else None
    if new is None or not summary or not hasattr(result, "messages"):
        if new is not None:
            state.notice("PostCompact: this compaction has no summary to replace")
        return result
    return _replace(result, summary, new)


def _replace(view: Any, old: str, new: str) -> CompactedView:
    """The view with the summary text ``old`` replaced by ``new`` in its messages."""
    messages = []
    for message in view.messages:
        content = message.get("content")
        if isinstance(content, str) and old in content:
            message = {**message, "content": content.replace(old, new)}
        messages.append(message)
    return view.model_copy(update={"messages": messages, "summary": new})


def summarize(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    budget: int,
    context: RunContext,
) -> str | None:
    """``summarize_context`` (``tryfirst``): nothing to summarise when PreCompact skipped; with
    PreCompact's instructions, ask the other summarisers again with them added."""
    if context.store.get(_SKIP):
        return ""
    extra = context.store.get(_EXTRA)
    if not extra or context.store.get(_INNER):
        return None
    merged = f"{instructions}\n{extra}" if instructions else str(extra)
    context.store[_INNER] = True
    try:
        result: str | None = context.hook.summarize_context(
            messages=messages,
            previous_summary=previous_summary,
            instructions=merged,
            budget=budget,
            context=context,
        )
        return result
    finally:
        context.store.pop(_INNER, None)
