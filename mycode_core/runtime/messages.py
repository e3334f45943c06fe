"""Building chat-completions messages from what happened."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SHOWN = "shown in the next message"
NOT_SHOWN = "not shown: this model is not known to take images (`images = true` sends them)"


@dataclass
class Expansion:
    """A user prompt made ready to send: its text, the image parts to attach, notes for the
    user, and ``kept`` (the images' saved copies, ``name`` and ``path``, for the transcript)."""

    text: str
    images: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept: list[dict[str, str]] = field(default_factory=list)


def user_message(content: str, images: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat message of a user turn: its text, then the image parts attached to it."""
    parts = [{"type": "text", "text": content}, *images]
    return {"role": "user", "content": parts if images else content}


def assistant_message(content: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """An assistant turn; ``calls`` are ``{"id", "name", "arguments" (JSON string)}``."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for call in calls
        ]
    elif not content:
        message["content"] = ""
    return message


def content_to_text(content: Any, images_shown: bool = False) -> str:
    """Flatten tool-result content blocks to text; an image becomes a short note."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    parts, shown = [], SHOWN if images_shown else NOT_SHOWN
    for block in content:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            size = len(str(block.get("data", ""))) * 3 // 4
            parts.append(f"[image {block.get('mime_type', 'image')} of {size} bytes, {shown}]")
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def tool_message(call_id: str, content: Any, is_error: bool, shown: bool = False) -> dict[str, Any]:
    """The ``role: tool`` answer to one call (``shown``: its images follow it)."""
    text = content_to_text(content, shown)
    if is_error and not text.startswith("Error"):
        text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": call_id, "content": text or "(no output)"}


def image_message(call_id: str, content: Any) -> dict[str, Any] | None:
    """A user message with a tool result's images (tool messages hold only text), or None."""
    if not isinstance(content, list):
        return None
    urls = [
        f"data:{b.get('mime_type', 'image/png')};base64,{b.get('data', '')}"
        for b in content
        if isinstance(b, dict) and b.get("type") == "image" and b.get("data")
    ]
    if not urls:
        return None
    images = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    note = {"type": "text", "text": f"Images returned by tool call {call_id}:"}
    return {"role": "user", "content": [note, *images]}


def guidance_message(source: str, message: str) -> dict[str, Any]:
    """Runtime guidance for the model, as a user message tagged with its source."""
    return {"role": "user", "content": f"[mycode {source}] {message}"}


def near_limit_message(remaining: int) -> str:
    """Guidance sent once when few steps remain."""
    return (
        f"Only {remaining} step(s) remain before the step limit. Finish the most important "
        "remaining work, verify it, and give your final answer."
    )
