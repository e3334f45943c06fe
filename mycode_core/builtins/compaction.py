"""Default ``compact_context`` (when the ``context_engine`` plugin is not installed): keep the
task and the most recent turns, drop the middle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookimpl
from mycode_core.tokens import count_message

if TYPE_CHECKING:
    from mycode_core.records import RunContext


def trim_to_budget(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """System message, first user message, a note, then the longest recent tail that fits (the
    newest turn may take twice ``budget``: a model that no longer sees what it did repeats it)."""
    if not messages:
        return messages
    head, rest = [messages[0]], messages[1:]
    first_user = next((i for i, m in enumerate(rest) if m.get("role") == "user"), None)
    if first_user is not None:
        head.append(rest[first_user])
        rest = rest[first_user + 1 :]
    used, running, tail_start = sum(count_message(m) for m in head) + 40, 0, len(rest)
    costs = [count_message(m) for m in rest]
    # a kept tail starts at a user or assistant message: no tool result loses its call
    starts = [i for i, message in enumerate(rest) if message.get("role") in ("user", "assistant")]
    for start in reversed(starts):
        segment = sum(costs[start:tail_start])
        if used + running + segment > budget * (1 if running else 2):
            break
        running += segment
        tail_start = start
    dropped, tail = tail_start, rest[tail_start:]
    if dropped == 0:
        return head + tail
    note = (
        f"[mycode: {dropped} earlier messages were left out to fit the context window. "
        "Re-read files you need rather than relying on memory of them.]"
    )
    return [*head, {"role": "user", "content": note}, *tail]


@hookimpl(trylast=True)
def compact_context(
    messages: list[dict[str, Any]], budget: int, context: RunContext, reason: str, tokens: int
) -> list[dict[str, Any]] | None:
    """Keep the system prompt, the task and the recent turns that fit half of ``budget``, then
    re-state the pinned context; a proactive offer below the threshold is declined."""
    threshold = getattr(getattr(context.settings, "context", None), "compact_threshold", 0)
    if reason == "proactive" and tokens <= budget * threshold:
        return None
    trimmed = trim_to_budget(messages, budget // 2)
    pins = [f"## {pin.title}\n{pin.text}" for pin in list(context.pins.values())]
    if pins:
        note = {"role": "user", "content": "[mycode: pinned context]\n\n" + "\n\n".join(pins)}
        trimmed = [*trimmed[:2], note, *trimmed[2:]]
    return trimmed
