"""Big things become references in the view (never in history).

* a tool result over the size limit: head + tail, and the path of the full output saved under
  ``MYCODE_HOME`` (readable with ``read_file``);
* tool-call arguments over the size limit (a 1 MB ``write_file``): long string values are
  replaced by a placeholder — the call and its result stay, so tool-message pairing holds;
* old tool results become one-line placeholders in :mod:`.masking` (they use
  :func:`describe_call` and :func:`save_full_output`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from mycode_context_engine.settings import EngineSettings
from mycode_core.api import replace_atomically

CHARS_PER_TOKEN = 4
LONG_VALUE = 200
BINARY_SHARE = 0.1
"""A result whose sampled characters are more than this share control bytes is binary."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def is_binary(text: str) -> bool:
    """Whether ``text`` looks like decoded binary bytes (many control characters)."""
    sample = text[:8_192]
    return bool(sample) and len(_CONTROL.findall(sample)) > BINARY_SHARE * len(sample)


def result_limit_chars(budget: int, settings: EngineSettings) -> int:
    """Characters a tool result may have in the view before it is cut to head + tail."""
    tokens = min(settings.max_result_tokens, max(200, int(budget * settings.big_result_share)))
    return tokens * CHARS_PER_TOKEN


def _safe_name(call_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:80] or "result"


def save_full_output(content: str, call_id: str, artifacts: Path) -> Path | None:
    """Write the full result once (same call id, same file); ``None`` if it cannot be. The
    write is atomic: one cut short (a crash, a full disk) leaves no partial file to reuse."""
    path = artifacts / f"result-{_safe_name(call_id)}.txt"
    try:
        if not path.exists():
            data = content.encode("utf-8", errors="replace")
            replace_atomically(path, data, create_parents=True, follow_folder_links=True)
    except (OSError, ValueError):
        return None
    return path


def head_and_tail(content: str, limit: int, where: Path | None) -> str:
    """The first and last parts of ``content`` (on line boundaries) with a note between."""
    head_size, tail_size = int(limit * 0.6), int(limit * 0.3)
    head = content[:head_size]
    if "\n" in head[head_size // 2 :]:
        head = head[: head.rfind("\n") + 1]
    tail = content[-tail_size:]
    if "\n" in tail[: tail_size // 2]:
        tail = tail[tail.find("\n") + 1 :]
    omitted = content[len(head) : len(content) - len(tail)]
    lines = content.count("\n") + 1
    saved = (
        f"the full output is saved at {where} — read it with read_file (offset/limit) for the rest"
        if where is not None
        else "the full output could not be saved"
    )
    note = (
        f"\n… [{omitted.count(chr(10))} lines, {len(omitted)} characters omitted from this view "
        f"of a {lines}-line result; {saved}] …\n"
    )
    return head + note + tail


def shape_tool_result(
    message: dict[str, Any], budget: int, settings: EngineSettings, artifacts: Any
) -> dict[str, Any] | None:
    """A big tool result's view form, or ``None`` when it is small enough."""
    content = message.get("content")
    if not isinstance(content, str):
        return None
    limit = result_limit_chars(budget, settings)
    binary = len(content) > 200 and is_binary(content)
    if len(content) <= limit and not binary:
        return None
    call_id = message.get("tool_call_id")
    if not call_id:  # no id to name the file by: name it by its content
        call_id = hashlib.sha1(content.encode("utf-8", "replace")).hexdigest()[:16]  # noqa: S324
    where = save_full_output(content, str(call_id), artifacts())
    if binary:
        saved = f"saved at {where}" if where is not None else "not saved"
        text = (
            f"[binary output: {len(content)} characters of mostly control bytes, not shown; "
            f"{saved} — inspect it with run_command (e.g. `xxd FILE | head`)]"
        )
        return {**message, "content": text}
    return {**message, "content": head_and_tail(content, limit, where)}


def _elide(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG_VALUE:
        lines = value.count("\n") + 1
        return (
            f"[{len(value)} characters ({lines} lines) elided from the view; "
            "the call ran with the full value]"
        )
    if isinstance(value, dict):
        return {key: _elide(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_elide(item) for item in value]
    return value


def shape_tool_calls(message: dict[str, Any], settings: EngineSettings) -> dict[str, Any] | None:
    """An assistant turn whose huge arguments are elided, or ``None`` when none is huge."""
    calls = message.get("tool_calls")
    if not calls:
        return None
    changed = False
    shaped = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str) and len(arguments) > settings.max_argument_chars:
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = {"arguments": arguments}
            short = json.dumps(_elide(parsed), ensure_ascii=False)
            if len(short) > settings.max_argument_chars:
                short = json.dumps({"elided": f"{len(arguments)} characters of arguments"})
            call = {**call, "function": {**function, "arguments": short}}
            changed = True
        shaped.append(call)
    return {**message, "tool_calls": shaped} if changed else None


def describe_call(call: dict[str, Any] | None) -> str:
    """``name(key=value, …)`` with short values, for one-line references."""
    if not call:
        return "a tool"
    function = call.get("function") or {}
    name = str(function.get("name", "tool"))
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        arguments = {}
    parts = []
    if isinstance(arguments, dict):
        for key, value in list(arguments.items())[:3]:
            text = value if isinstance(value, str) else json.dumps(value)
            text = " ".join(str(text).split())
            parts.append(f"{key}={text[:60]}{'…' if len(text) > 60 else ''}")
    return f"{name}({', '.join(parts)})"
