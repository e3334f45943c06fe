"""Choosing what a compacted view keeps.

Masking first (old tool results → one-line placeholders, :mod:`.masking`); when that does not
bring the view down to ``compact_target``, the new view is: the system message; one summary
message (the task, the model's cumulative summary, the facts the runtime recorded, the todo
list, every pin); then the most recent whole turns verbatim, older tool results in them masked.
A cut never falls between an assistant's tool calls and their results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mycode_context_engine.facts import recorded_facts
from mycode_context_engine.masking import call_index, mask_results
from mycode_context_engine.settings import EngineSettings
from mycode_context_engine.shaping import shape_tool_result
from mycode_core.api import ContextOverflow
from mycode_core.records import CompactedView
from mycode_core.tokens import count_message, count_text

MARKER = "[mycode: context summary]"
SUMMARY_OPEN, SUMMARY_CLOSE = "<summary>", "</summary>"
TASK_HEADING, FACTS_HEADING = "## Task", "## Recorded by mycode"

Summarize = Callable[[list[dict[str, Any]], str | None], tuple[str | None, str | None]]
"""``summarize(older_messages, previous_summary)`` → ``(summary, problem)``."""


def is_summary_message(message: dict[str, Any]) -> bool:
    """Whether ``message`` is a summary message this engine wrote."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(MARKER)


def previous_parts(message: dict[str, Any]) -> tuple[str | None, str]:
    """``(summary, task)`` of an earlier summary message."""
    content = str(message.get("content", ""))
    summary = None
    match = re.search(
        re.escape(SUMMARY_OPEN) + r"\n(.*?)\n" + re.escape(SUMMARY_CLOSE), content, re.S
    )
    if match and match.group(1).strip():
        summary = match.group(1).strip()
    task = ""
    match = re.search(re.escape(TASK_HEADING) + r"\n(.*?)\n## ", content, re.S)
    if match:
        task = match.group(1).strip()
    return summary, task


def _segments(body: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """``[start, end)`` spans: each starts at a user or assistant message; tool messages
    (and anything else) stay with the turn before them."""
    starts = [i for i, m in enumerate(body) if m.get("role") in ("user", "assistant")]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    ends = [*starts[1:], len(body)]
    return list(zip(starts, ends, strict=True))


def _todo_lines(context: Any) -> list[str]:
    todos = context.store.get("todos") if hasattr(context, "store") else None
    marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
    lines = []
    for item in todos or ():
        if isinstance(item, dict) and item.get("content"):
            lines.append(f"- {marks.get(str(item.get('status')), '[ ]')} {item['content']}")
    return lines


def task_text(context: Any, previous_task: str) -> str:
    """The session's task: what earlier summaries carried plus this run's prompts."""
    prompt = str(getattr(context, "prompt", "") or "").strip()
    if not prompt or prompt in previous_task:
        return previous_task
    if previous_task and prompt.startswith(previous_task):
        return prompt
    return f"{previous_task}\n\n{prompt}".strip()


def summary_message(task: str, summary: str | None, note: str | None, context: Any) -> str:
    """The text of the summary message (pinned context and recorded facts included)."""
    parts = [
        MARKER + " Earlier turns of this session were compacted to save context. What "
        "follows is everything kept from them; the most recent turns come after it verbatim.",
        f"{TASK_HEADING}\n{task or '(see the conversation below)'}",
    ]
    body = summary.strip() if summary else ""
    if note:
        body = f"{body}\n\n({note})".strip()
    parts.append(f"## Summary of earlier work\n{SUMMARY_OPEN}\n{body or '(none)'}\n{SUMMARY_CLOSE}")
    parts.append(recorded_facts(context))
    todos = _todo_lines(context)
    if todos:
        parts.append("## Todo list\n" + "\n".join(todos))
    for pin in list(getattr(context, "pins", {}).values()):
        parts.append(f"## Pinned: {pin.title}\n{pin.text}")
    parts.append(
        "Continue the task from here. Files may have changed since you last read them: re-read "
        "a file before editing it. Full outputs named above stay readable with read_file."
    )
    return "\n\n".join(parts)


def _overflow(system: dict[str, Any], task: str, context: Any, budget: int) -> str:
    pins = sum(count_text(p.text) for p in list(getattr(context, "pins", {}).values()))
    own = count_message(system)
    asked = count_text(task)
    frame = max(0, count_text(summary_message(task, None, None, context)) - asked - pins)
    return (
        f"the pinned context alone does not fit the context budget of {budget} tokens (the "
        "window minus the reply cap and the tool schemas): system "
        f"prompt ~{own} tokens (AGENTS.md/CLAUDE.md included), the task ~{asked} tokens, "
        f"pins ~{pins} tokens, the compaction summary's headings and recorded facts ~{frame} "
        f"tokens (~{own + asked + pins + frame} in all). Shorten the prompt or the project "
        "instructions, or use a model with a larger context window."
    )


def _no_summary(older: list[dict[str, Any]], previous: str | None) -> tuple[str | None, str | None]:
    """The summariser of the ``mask`` and ``off`` strategies: older turns are dropped, the
    previous summary and the recorded facts stay."""
    return previous, None


def compact_view(
    messages: list[dict[str, Any]],
    budget: int,
    context: Any,
    reason: str,
    settings: EngineSettings,
    summarize: Summarize,
    tokens: int | None = None,
) -> tuple[CompactedView | None, str | None]:
    """The compacted view of ``messages`` for ``budget`` tokens (``None`` to decline), and
    why the model's summary could not be used (``None`` when it could); ``tokens`` is the
    size of ``messages`` when the caller knows it (the core does).

    Stages, cheapest first: masking old tool results (free; enough when the view falls to
    ``compact_target`` of the budget), then a summary of older turns (``summary``
    strategies, and ``/compact``), else dropping older turns (``truncate``)."""
    system, body = messages[0], list(messages[1:])
    size = _size(system, body) if tokens is None else tokens
    if reason == "proactive" and size <= budget * settings.compact_threshold:
        return _batch(system, body, budget, context, settings), None
    _check_pinned(system, body, budget, context)
    target = max(1, int(budget * settings.compact_target))
    masked = 0
    if "mask" in settings.strategy and reason != "manual":
        body = [_reshape(m, budget, settings, context) for m in body]
        keep, pinned = settings.keep_recent_results, pinned_texts(context)
        while True:  # fewer results kept whole while the target is not reached (≥ 1)
            trial, count = mask_results(body, keep, lambda: context.artifacts_dir, pinned=pinned)
            if _size(system, trial) <= target or keep <= 1:
                break
            keep = max(1, keep // 2)
        body, masked = trial, count
        if masked and _size(system, body) <= target:
            return CompactedView(messages=[system, *body], stage="mask"), None
    if "summary" not in settings.strategy and reason != "manual":
        summarize = _no_summary
    result, problem = _summarised(
        system, body, budget, target, context, reason, settings, summarize
    )
    if result is None and masked:
        return CompactedView(messages=[system, *body], stage="mask"), None
    if result is not None and summarize is _no_summary:
        result.stage = "truncate"
    return result, problem


def _batch(
    system: dict[str, Any],
    body: list[dict[str, Any]],
    budget: int,
    context: Any,
    settings: EngineSettings,
) -> CompactedView | None:
    """Below the threshold (the core offers the view every ``keep_recent_results`` new
    results): every result but the last ``keep_recent_results`` masked at once, or ``None``
    when none is to be masked. Batches keep the prefix stable in between."""
    if "mask" not in settings.strategy:
        return None
    settled = _settled(context, budget)
    body = [m if settled.get(id(m)) is m else _reshape(m, budget, settings, context) for m in body]
    masked, count = mask_results(
        body,
        settings.keep_recent_results,
        lambda: context.artifacts_dir,
        settled=settled,
        pinned=pinned_texts(context),
    )
    return CompactedView(messages=[system, *masked], stage="mask") if count else None


def pinned_texts(context: Any) -> tuple[str, ...]:
    """The texts of the run's pins: a masked view keeps the results that show them (only a
    summary message re-states pins)."""
    return tuple(pin.text for pin in list(getattr(context, "pins", {}).values()) if pin.text)


_SETTLED = "context_engine.settled"


def _settled(context: Any, budget: int) -> dict[int, dict[str, Any]]:
    """The messages (by identity) earlier batches left as they are for this ``budget``: the
    next batch looks only at the new ones (an offer costs no more as the session grows)."""
    store = context.store if hasattr(context, "store") else {}
    kept = store.get(_SETTLED)
    if kept is None or kept[0] != budget:
        kept = store[_SETTLED] = (budget, {})
    settled: dict[int, dict[str, Any]] = kept[1]
    return settled


def _check_pinned(
    system: dict[str, Any], body: list[dict[str, Any]], budget: int, context: Any
) -> None:
    """:class:`ContextOverflow` when the system prompt, task and pins alone exceed ``budget``."""
    previous_summary, previous_task = _previous(body)
    task = task_text(context, previous_task)
    text = summary_message(task, previous_summary, None, context)
    if count_message(system) + count_text(text) > budget:
        raise ContextOverflow(_overflow(system, task, context, budget))


def _previous(body: list[dict[str, Any]]) -> tuple[str | None, str]:
    """``(summary, task)`` of the summary message a view starts with (``(None, "")``)."""
    if body and is_summary_message(body[0]):
        return previous_parts(body[0])
    return None, ""


def _size(system: dict[str, Any], body: list[dict[str, Any]]) -> int:
    return count_message(system) + sum(map(count_message, body))


def _summarised(
    system: dict[str, Any],
    body: list[dict[str, Any]],
    budget: int,
    target: int,
    context: Any,
    reason: str,
    settings: EngineSettings,
    summarize: Summarize,
) -> tuple[CompactedView | None, str | None]:
    """Older turns → one summary message; the recent turns (within the target) verbatim."""
    previous_summary, previous_task = _previous(body)
    if body and is_summary_message(body[0]):
        body = body[1:]
    task = task_text(context, previous_task)
    fixed = count_message(system) + count_text(
        summary_message(task, previous_summary, None, context)
    )
    if fixed > budget:
        raise ContextOverflow(_overflow(system, task, context, budget))
    summary_allowance = int(budget * settings.summary_share)
    keep_budget = min(
        int(budget * (settings.keep_recent if reason == "proactive" else settings.keep_recent / 2)),
        max(0, target - fixed - summary_allowance),
    )
    costs = [count_message(m) for m in body]
    segments = _segments(body) if body else []
    cut = len(body)
    used = 0
    most = 2 if reason == "manual" else len(segments)  # /compact keeps only the last turns
    window = settings.keep_recent_results if "mask" in settings.strategy else len(body)
    results = 0  # masking strategies keep the turns of the last keep_recent_results results
    for count, (start, end) in enumerate(reversed(segments)):
        cost = sum(costs[start:end])
        results += sum(1 for m in body[start:end] if m.get("role") == "tool")
        if (used + cost > keep_budget or count >= most or results > window) and cut < len(body):
            break
        used += cost
        cut = start
    older, tail = body[:cut], body[cut:]
    keep = min(settings.keep_recent_results, settings.recent_results)
    tail, _ = mask_results(tail, keep, lambda: context.artifacts_dir, call_index(body))
    tail = [_reshape(m, budget, settings, context) for m in tail]  # the window may have shrunk
    if not older and tail == body[cut:]:
        return None, None  # nothing to summarise or shrink
    summary, problem = (previous_summary, None)
    if older:
        summary, problem = summarize(older, previous_summary)
        if problem is None and summary and count_text(summary) > summary_allowance * 1.5:
            summary, problem = previous_summary, "the model's summary was too long; not used"
        if problem is not None:
            summary = previous_summary
    note = None if problem is None else f"mycode: {problem}; the recorded facts below are exact"
    text = summary_message(task, summary, note, context)
    head = {"role": "user", "content": text}
    while len(_segments(tail)) > 1 and _size(system, [head, *tail]) > target:
        tail = _drop_first_segment(tail)  # down to the target: several steps until the next
    while tail and _size(system, [head, *tail]) > budget:
        if len(_segments(tail)) > 1 or keep <= 1:
            tail = _drop_first_segment(tail)
        else:  # the last turn alone: fewer of its results whole, never its calls dropped
            keep = max(1, keep // 2)
            tail, _ = mask_results(tail, keep, lambda: context.artifacts_dir, call_index(body))
    if tail and tail[0].get("role") == "user" and isinstance(tail[0].get("content"), str):
        head = {"role": "user", "content": f"{text}\n\n---\n\n{tail[0]['content']}"}
        tail = tail[1:]
    if count_message(system) + count_message(head) > budget:
        raise ContextOverflow(_overflow(system, task, context, budget))
    shown = summary if summary else "(no model summary)"
    if note:
        shown = f"{shown}\n({note})"
    stage = "summary" if older and problem is None and summary else "truncate"
    return CompactedView(messages=[system, head, *tail], summary=shown, stage=stage), problem


def _reshape(
    message: dict[str, Any], budget: int, settings: EngineSettings, context: Any
) -> dict[str, Any]:
    """A kept tool result cut again to head + tail if it is too big for today's budget."""
    if message.get("role") != "tool":
        return message
    shaped = shape_tool_result(message, budget, settings, lambda: context.artifacts_dir)
    return message if shaped is None else shaped


def _drop_first_segment(tail: list[dict[str, Any]]) -> list[dict[str, Any]]:
    segments = _segments(tail)
    if len(segments) <= 1:
        return []
    return tail[segments[1][0] :]


def problem_of(summary: str | None) -> str | None:
    """Why a summariser reply cannot be used, or ``None``: nothing, binary bytes, or the same
    few words over and over (a model stuck in a loop)."""
    from mycode_context_engine.shaping import is_binary

    if summary is None or not summary.strip():
        return "the summariser returned nothing"
    if is_binary(summary):
        return "the summariser returned binary garbage"
    words = summary.split()
    if len(words) >= 50 and len(set(words)) < len(words) / 20:
        return "the summariser repeated itself (garbage)"
    return None
