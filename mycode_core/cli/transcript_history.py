"""Rebuilding chat history from a stored transcript: ``--resume``, ``--continue`` and
``/rewind`` (the runner only restores the view the transcript recorded:
:func:`mycode_core.runtime.viewing.last_view`)."""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.cli.mentions import MAX_IMAGE_BYTES, image_part, image_type, read_bytes
from mycode_core.runtime.messages import (
    assistant_message,
    guidance_message,
    image_message,
    tool_message,
    user_message,
)
from mycode_core.runtime.viewing import last_checkpoint


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
    """An ``assistant`` event's calls as chat calls; a call without a usable id and name (a
    hand-edited or corrupt transcript) is left out, as a torn line is."""
    calls = []
    for call in raw if isinstance(raw, list) else ():
        if not isinstance(call, dict):
            continue
        call_id, name, arguments = call.get("id"), call.get("name"), call.get("arguments", "{}")
        if not isinstance(call_id, str) or not isinstance(name, str):
            continue
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append({"id": call_id, "name": name, "arguments": arguments})
    return calls


NOT_RUN = "Not run: the session was interrupted."
CUT_OFF = (
    "Interrupted: mycode stopped (killed or crashed) while this call ran, so its result was "
    "lost. It may have run in part or in full: check its effects before running it again."
)


def history_from_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages that reproduce what the model saw, from transcript events (as ``/rewind``
    left them: ``mycode_core.api.rewound``). Tool results follow their calls in the order the
    model made them, as the run sent them (parallel calls finish in any order). A run cut short
    mid-batch leaves tool calls without results; each gets an "interrupted" result so the
    history stays valid for the API: "not run", or, for a call its permission let run, that
    its result was lost. If the last run stopped at its step limit with a checkpoint, the
    history restarts from there."""
    # a child agent's events (issue 11) are its own conversation: the parent's history has only
    # its delegate_task call and result (a call whose child was cut off is closed below)
    events = [event for event in events if not event.get("agent_id")]
    checkpoint = last_checkpoint(events)
    if checkpoint is not None:  # the first prompt, then the checkpoint
        first = [event for event in events if event.get("type") == "user"][:1]
        note = "Continuation checkpoint from the previous run:\n\n" + checkpoint
        return [*map(stored_user_message, first), assistant_message(note, [])]
    messages: list[dict[str, Any]] = []
    batch = _Batch()
    for event in events:
        kind = event.get("type")
        if kind == "user":
            batch.close(messages)
            messages.append(stored_user_message(event))
        elif kind == "assistant":
            batch.close(messages)
            calls = _tool_calls(event.get("tool_calls"))
            content = event.get("content")
            messages.append(assistant_message(content if isinstance(content, str) else None, calls))
            batch.calls = [str(c["id"]) for c in calls]
        elif kind == "permission" and event.get("decision") == "allow":
            batch.allowed.add(str(event.get("id")))
        elif kind == "tool_result":
            batch.answer(event)
        elif kind == "guidance":
            batch.close(messages)
            messages.append(guidance_message(str(event.get("source")), str(event.get("message"))))
    batch.close(messages)
    return messages


@dataclass
class _Batch:
    """The tool calls of the last assistant message and what the transcript holds of them."""

    calls: list[str] = field(default_factory=list)
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    allowed: set[str] = field(default_factory=set)
    images: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The messages showing results' images (``images_sent``), by call: they follow all the
    results, in the calls' order, as the run sent them."""

    def answer(self, event: dict[str, Any]) -> None:
        """Keep a ``tool_result`` of an open call (one per call: an id made twice, twice)."""
        call_id, content = str(event.get("id")), event.get("content", "")
        kept = self.answers.setdefault(call_id, [])
        if len(kept) < self.calls.count(call_id):
            metadata = event.get("metadata")
            shown = isinstance(metadata, dict) and bool(metadata.get("images_sent"))
            kept.append(tool_message(call_id, content, bool(event.get("is_error")), shown))
            if shown and (images := image_message(call_id, content)) is not None:
                self.images.setdefault(call_id, []).append(images)

    def close(self, messages: list[dict[str, Any]]) -> None:
        """Append one answer per call, in the calls' order, then the images they showed; then
        the batch is empty."""
        for call_id in self.calls:
            kept = self.answers.get(call_id)
            lost = CUT_OFF if call_id in self.allowed else NOT_RUN
            messages.append(kept.pop(0) if kept else tool_message(call_id, lost, True))
        for call_id in self.calls:
            if shown := self.images.get(call_id):
                messages.append(shown.pop(0))
        self.calls, self.answers, self.allowed, self.images = [], {}, set(), {}


def stored_user_message(event: dict[str, Any]) -> dict[str, Any]:
    """A transcript ``user`` event as a chat message, its saved images attached again (a copy
    that is gone, or no image any more, becomes a line of the text instead)."""
    content, parts, images = str(event.get("content", "")), [], event.get("images")
    for image in images if isinstance(images, list) else ():
        name = image.get("name") if isinstance(image, dict) else None
        try:
            data = read_bytes(Path(image["path"]), MAX_IMAGE_BYTES)
        except (OSError, KeyError, TypeError):
            data = b""
        mime = image_type(data[:16])
        if mime is None:
            content += f"\n\n[image {name}: its saved copy is gone]"
        else:
            parts.append(image_part(mime, data))
    return user_message(content, parts)


def elsewhere_notice(session_id: str, events: list[dict[str, Any]], workspace: Path) -> str | None:
    """The line for a session resumed outside the folder it was started in (its first
    ``system`` event's ``cwd``), else None. Claude Code refuses such a resume and names the
    folder; mycode goes on here, in the current folder, and says so."""
    started = next((str(e.get("cwd") or "") for e in events
                    if e.get("type") == "system" and not e.get("agent_id")), "")  # fmt: skip
    if not started or os.path.realpath(started) == os.path.realpath(workspace):
        return None
    there = f"cd {shlex.quote(started)} && mycode --resume {session_id}"
    return (
        f"session {session_id} was started in {started}: it goes on here, in {workspace}, "
        f"and its tools read and change the files here (to go on there: {there})"
    )


def forget_if_empty(store: Any, session_id: str) -> None:
    """Remove a closed session's transcript when it holds no prompt (mycode opened and left,
    ``/clear`` at once, ``-p /diff``): no conversation to list or ``--continue``, as Claude
    Code saves none. A session with child agents' transcripts stays."""
    path = store.path_for(session_id)
    if path.with_suffix(".agents").exists():
        return
    try:
        events = store.read_events(session_id)
    except OSError:
        return
    if not any(e["type"] in ("user", "typed") and not e.get("agent_id") for e in events):
        path.unlink(missing_ok=True)
