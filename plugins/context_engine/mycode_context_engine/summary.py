"""The default summariser: one side request without tools, asking for a structured summary."""

from __future__ import annotations

from typing import Any

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent whose older conversation turns are being "
    "removed to save space. Write for the agent itself, which will continue the task with only "
    "your summary and its most recent turns. Be concrete: file paths, function names, commands, "
    "error messages, numbers. Never invent facts; leave out what is unknown."
)
HEADINGS = ("Goal", "Constraints", "Progress", "Decisions", "Open items", "Next steps")
RESULT_CHARS = 1_200
ARGUMENT_CHARS = 400


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if p) or "[non-text content]"
    return "" if content is None else str(content)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2 :]


def render_transcript(messages: list[dict[str, Any]], max_chars: int) -> str:
    """The messages as plain text for the summariser, newest kept when it must be cut."""
    names: dict[str, str] = {}
    blocks: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            lines = [f"ASSISTANT: {_clip(_text(message.get('content')), 2_000)}".rstrip()]
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name", "tool"))
                arguments = _clip(str(function.get("arguments", "")), ARGUMENT_CHARS)
                lines.append(f"  CALL {function.get('name')}({arguments})")
            blocks.append("\n".join(lines))
        elif role == "tool":
            name = names.get(str(message.get("tool_call_id")), "tool")
            blocks.append(f"RESULT of {name}: {_clip(_text(message.get('content')), RESULT_CHARS)}")
        else:
            blocks.append(f"{str(role).upper()}: {_clip(_text(message.get('content')), 4_000)}")
    kept: list[str] = []
    used = 0
    for block in reversed(blocks):
        if used + len(block) > max_chars and kept:
            kept.append(f"[{len(blocks) - len(kept)} earlier messages omitted]")
            break
        kept.append(block[:max_chars])
        used += len(block)
    return "\n\n".join(reversed(kept))


def summary_request(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    max_words: int,
    max_chars: int,
) -> list[dict[str, Any]]:
    """The side request's messages."""
    parts = []
    if previous_summary:
        parts.append(
            "The summary written at the previous compaction (fold it in; keep what still "
            f"matters):\n<previous-summary>\n{previous_summary}\n</previous-summary>"
        )
    parts.append(
        f"The turns being removed:\n<turns>\n{render_transcript(messages, max_chars)}\n</turns>"
    )
    if instructions:
        parts.append(f"The user asks the summary to focus on: {instructions}")
    headings = "; ".join(HEADINGS)
    parts.append(
        f"Write the updated summary under these Markdown headings: {headings}. "
        f"At most {max_words} words. Reply with the summary only."
    )
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def default_summary(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    context: Any,
    *,
    max_tokens: int,
    request_chars: int,
) -> str | None:
    """Ask the model (``context.side_request``); ``None`` when no side request is possible.
    Errors propagate to the caller, which falls back to the recorded facts."""
    side_request = getattr(context, "side_request", None)
    if side_request is None:
        return None
    request = summary_request(
        messages, previous_summary, instructions, max(50, int(max_tokens * 0.7)), request_chars
    )
    text = str(side_request(request) or "")
    return text if text.strip() else None  # an empty reply is a failure, not "facts only"
