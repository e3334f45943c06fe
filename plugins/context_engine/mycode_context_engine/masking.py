"""Observation masking: the first, free stage of a compaction.

Tool results older than the last ``keep_recent_results`` become one line naming the tool, the
gist of its arguments, the result's size and the path of the full output saved under this
session's artifacts folder, with how to read it back (``read_file`` with ``offset``); the images
such a result showed (the user message after the results, for a model that takes images) are
left out with one line saying so. The model's own reasoning and calls stay, and so does a
result holding pinned context (a loaded skill: the view must go on showing it). Masking happens
only at a compaction, all old results at once (a batch), so between compactions every request
extends the previous one exactly.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from mycode_context_engine.shaping import describe_call, save_full_output

MASK_PREFIX = "[masked result of "
MIN_MASK_CHARS = 300
"""Results shorter than this are kept: the placeholder would not be much smaller."""
_SAVED = re.compile(r"(?:saved at|full output:) (\S+?)(?:\]|\s|$)")


def is_masked(message: dict[str, Any]) -> bool:
    """Whether a tool message is already a placeholder."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith(MASK_PREFIX)


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _artifact(text: str, call_id: str, artifacts: Any) -> Path | str | None:
    """Where the full output is: a path the result already names, else a new file."""
    named = _SAVED.search(text)
    if named:
        return named.group(1).rstrip(".,;—")
    try:
        folder = Path(artifacts())
    except Exception:  # noqa: BLE001 - no artifacts folder: the placeholder says so
        return None
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:8]  # noqa: S324
    return save_full_output(text, f"{call_id}-{digest}", folder)


def placeholder(message: dict[str, Any], call: dict[str, Any] | None, artifacts: Any) -> str:
    """The one-line form of an old tool result."""
    text = _text(message.get("content"))
    lines = text.count("\n") + 1
    where = _artifact(text, str(message.get("tool_call_id") or "result"), artifacts)
    again = (
        f"full output at {where} — read_file it (offset=N from line N)"
        if where is not None
        else "call the tool again if you need it"
    )
    return f"{MASK_PREFIX}{describe_call(call)}: {lines} lines, {len(text)} chars; {again}]"


def call_index(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool calls by id, to name the call a result answers."""
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            calls[str(call.get("id"))] = call
    return calls


def mask_results(
    messages: list[dict[str, Any]],
    keep: int,
    artifacts: Any,
    calls: dict[str, dict[str, Any]] | None = None,
    settled: dict[int, dict[str, Any]] | None = None,
    pinned: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], int]:
    """``messages`` with every tool result but the last ``keep`` masked, and how many were
    masked now. Unchanged messages are the same objects (the view keeps their identity).
    A result containing one of the ``pinned`` texts stays whole.

    ``settled`` holds messages (by identity) known to need nothing: they are skipped, and
    every message before the last ``keep`` results that needs nothing now is added to it."""
    end = _old_end(messages, keep)
    out = list(messages)
    masked = 0
    for index in range(end):
        message = messages[index]
        if settled is not None and settled.get(id(message)) is message:
            continue
        if (
            message.get("role") == "tool"
            and not is_masked(message)
            and len(_text(message.get("content"))) > MIN_MASK_CHARS
            and not any(text in _text(message.get("content")) for text in pinned)
        ):
            call_id = str(message.get("tool_call_id"))
            call = _call_before(messages, index, call_id) if calls is None else calls.get(call_id)
            message = out[index] = {**message, "content": placeholder(message, call, artifacts)}
            masked += 1
        elif _result_images(messages, index):
            message = out[index] = {"role": "user", "content": _images_gone(message["content"])}
            masked += 1
        if settled is not None:
            settled[id(message)] = message
    return out, masked


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def _result_images(messages: list[dict[str, Any]], index: int) -> bool:
    """Whether ``messages[index]`` shows tool results' images: a user message with images
    among the results, or after them (a prompt of the user's follows the model's answer)."""
    message, before = messages[index], messages[index - 1] if index else {}
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(map(_is_image, content))
        and (before.get("role") == "tool" or _result_images(messages, index - 1))
    )


def _images_gone(content: list[Any]) -> str:
    """The text of an old result's image message, the images themselves left out."""
    count = sum(map(_is_image, content))
    words = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p)
    shown, them = ("1 image", "it") if count == 1 else (f"{count} images", "them")
    return f"{words} [{shown} no longer shown: call the tool again to see {them} anew]".strip()


def _old_end(messages: list[dict[str, Any]], keep: int) -> int:
    """The index of the first of the last ``keep`` tool results (``len`` when ``keep`` ≤ 0,
    0 when there are no more than ``keep``)."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "tool":
            seen += 1
            if seen >= keep:
                return index if keep > 0 else len(messages)
    return 0 if keep > 0 else len(messages)


def _call_before(messages: list[dict[str, Any]], index: int, call_id: str) -> dict[str, Any] | None:
    """The tool call ``call_id`` a result at ``index`` answers: the nearest earlier one."""
    for position in range(index - 1, -1, -1):
        for call in messages[position].get("tool_calls") or ():
            if str(call.get("id")) == call_id:
                return call
    return None
