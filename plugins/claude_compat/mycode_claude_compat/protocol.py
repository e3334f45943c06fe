"""What hook commands said, read as Claude Code reads it.

Exit 0: stdout JSON is parsed (plain text is context for ``UserPromptSubmit`` and
``SessionStart``); exit 2: block, stderr is the reason; any other code, a crash, a timeout or
invalid JSON: a non-blocking error (one notice) — and for ``PreToolUse`` a reason to ask.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mycode_claude_compat.runner import HookRun
from mycode_claude_compat.sources import CommandHook

_TERMINAL_SEQUENCE = re.compile(r"(?:\x07|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))+")
"""What a hook's ``terminalSequence`` may write: bells and OSC sequences, nothing that moves
the cursor or clears the screen."""
_PLAIN_TEXT_CONTEXT = ("UserPromptSubmit", "SessionStart", "PreCompact")
_PERMISSION_ORDER = {"deny": 3, "ask": 2, "allow": 1}


@dataclass
class Decision:
    """The combined answer of the hooks of one event."""

    block: bool = False
    permission: str | None = None
    """``PreToolUse``: ``allow``, ``deny`` or ``ask``; ``PermissionRequest``: allow or deny."""
    reason: str = ""
    hook: CommandHook | None = None
    """The hook that blocked or decided."""
    context: list[str] = field(default_factory=list)
    updated_input: dict[str, Any] | None = None
    stop: str | None = None
    """``continue: false``: the stop reason shown to the user."""
    messages: list[str] = field(default_factory=list)
    """``systemMessage`` lines, shown to the user."""
    problems: list[str] = field(default_factory=list)
    failed: CommandHook | None = None
    """A hook that crashed, timed out or printed invalid JSON."""
    summary: str | None = None
    """``PostCompact``: ``hookSpecificOutput.compactSummary``, the replacement summary."""
    sequences: list[str] = field(default_factory=list)
    """``terminalSequence``: bells and OSC sequences (a notification, a window title) for the
    terminal, which the hook itself does not have."""


def _reason(explicit: Any, data: dict[str, Any] | None, hook: CommandHook, event: str) -> str:
    if isinstance(explicit, str) and explicit.strip():
        return explicit.strip()
    message = (data or {}).get("systemMessage")
    if isinstance(message, str) and message.strip():
        return message.strip()
    return f"blocked by the {event} hook {hook.label} ({hook.source})"


def _read(run: HookRun, event: str, out: Decision) -> None:
    hook = run.hook
    if run.detached:
        return
    if run.failed or run.json_error is not None:
        out.problems.append(run.problem())
        if hook.prompt is None:  # a prompt hook fails open, as in Claude Code
            out.failed = out.failed or hook
        return
    if run.code == 2:
        reason = _reason(run.stderr, None, hook, event)
        out.block = True
        out.reason = out.reason or reason
        out.hook = out.hook or hook
        if event in ("PreToolUse", "PermissionRequest"):
            _permission(out, "deny", reason, hook)
        return
    data = run.data
    if data is None:
        text = run.stdout.strip()
        if text and event in _PLAIN_TEXT_CONTEXT:
            out.context.append(text)
        return
    message = data.get("systemMessage")
    if isinstance(message, str) and message.strip():
        out.messages.append(message.strip())
    sequence = data.get("terminalSequence")
    if isinstance(sequence, str) and sequence:
        if _TERMINAL_SEQUENCE.fullmatch(sequence):
            out.sequences.append(sequence)
        else:
            out.problems.append(
                f"hook {hook.label}: terminalSequence ignored (only bells and OSC sequences, "
                "such as a notification or a window title, are written)"
            )
    if data.get("continue") is False and out.stop is None:
        stop = data.get("stopReason")
        out.stop = (
            stop if isinstance(stop, str) and stop.strip() else f"stopped by hook {hook.label}"
        )
    decision = data.get("decision")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if event == "PreToolUse":
        legacy = {"approve": "allow", "block": "deny"}.get(str(decision))
        chosen = specific.get("permissionDecision") or legacy
        if chosen in _PERMISSION_ORDER:
            why = specific.get("permissionDecisionReason") or data.get("reason")
            _permission(out, str(chosen), _reason(why, data, hook, event), hook)
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            out.updated_input = updated
    elif event == "PermissionRequest":
        _request_decision(specific.get("decision"), data, hook, out)
    elif decision == "block" or specific.get("permissionDecision") == "deny":
        out.block = True
        out.reason = out.reason or _reason(data.get("reason"), data, hook, event)
        out.hook = out.hook or hook
    if event == "PostCompact" and isinstance(specific.get("compactSummary"), str):
        out.summary = specific["compactSummary"].strip() or None
    extra = specific.get("additionalContext")
    if isinstance(extra, str) and extra.strip():
        out.context.append(extra.strip())


def _request_decision(chosen: Any, data: dict[str, Any], hook: CommandHook, out: Decision) -> None:
    """``PermissionRequest``: ``decision.behavior`` allow or deny (with ``message``,
    ``updatedInput``; ``interrupt`` also stops the run)."""
    if not isinstance(chosen, dict) or chosen.get("behavior") not in ("allow", "deny"):
        return
    behavior = str(chosen["behavior"])
    reason = _reason(chosen.get("message"), data, hook, "PermissionRequest")
    if behavior == "allow" and not str(chosen.get("message") or "").strip():
        reason = f"allowed by the PermissionRequest hook {hook.label}"
    _permission(out, behavior, reason, hook)
    if behavior == "allow" and isinstance(chosen.get("updatedInput"), dict):
        out.updated_input = chosen["updatedInput"]
    if behavior == "deny" and chosen.get("interrupt") is True and out.stop is None:
        out.stop = reason


def _permission(out: Decision, chosen: str, reason: str, hook: CommandHook) -> None:
    current = _PERMISSION_ORDER.get(out.permission or "", 0)
    if _PERMISSION_ORDER[chosen] > current:
        out.permission, out.reason, out.hook = chosen, reason, hook


def decide(runs: list[HookRun], event: str) -> Decision:
    """Combine the runs of one event: deny > ask > allow, any block blocks, contexts add up."""
    out = Decision()
    for run in runs:
        _read(run, event, out)
    return out
