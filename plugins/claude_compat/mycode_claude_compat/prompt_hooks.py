"""Claude Code's ``{"type": "prompt"}`` hooks: the run's model judges the event.

The hook's ``prompt`` with ``$ARGUMENTS`` replaced by the hook input (JSON; appended when the
prompt has no ``$ARGUMENTS``) goes to the run's model as a side request (``context.
side_request``, purpose ``hook``: its tokens count for the run, the scripted provider answers
it itself). The model answers ``{"ok": true}`` or ``{"ok": false, "reason": "..."}``; ``ok:
false`` is read as a command hook's ``{"decision": "block", "reason": ...}`` (``PreToolUse``:
deny). As in Claude Code a prompt hook fails open: a timeout (default 30 s), a failed request
or an answer that is not that JSON is one notice and decides nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from mycode_claude_compat.names import claude_json
from mycode_claude_compat.sources import CommandHook

SYSTEM = (
    "You check one event of a coding agent's session for a hook its user set up. Judge the "
    "event by the user's instructions below and answer with one JSON object and nothing "
    'else: {"ok": true} when it may go on, {"ok": false, "reason": "..."} when it may not '
    "(the reason is shown to the agent)."
)


def prompt_text(template: str, payload: dict[str, Any]) -> str:
    """The hook's prompt with the input in place of ``$ARGUMENTS`` (or after it)."""
    data = claude_json(payload)
    if "$ARGUMENTS" in template:
        return template.replace("$ARGUMENTS", data)
    return f"{template}\n\nHook input:\n{data}"


def _verdict(text: str) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("ok"), bool) else None


def ask_model(
    hook: CommandHook, payload: dict[str, Any], run: Any, ask: Callable[..., str] | None
) -> Any:
    """Ask the model; ``run`` (a ``HookRun``) filled in as a command's would be."""
    if ask is None:
        run.error = "this run has no model to ask"
        return run
    assert hook.prompt is not None
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt_text(hook.prompt, payload)},
    ]
    box: dict[str, str] = {}
    done = threading.Event()

    def call() -> None:
        try:
            box["text"] = str(ask(messages, purpose="hook") or "")
        except Exception as exc:  # noqa: BLE001 - a failed request only fails this hook
            box["error"] = f"the model request failed: {exc}"
        done.set()

    threading.Thread(target=call, daemon=True, name="mycode-cc-prompt-hook").start()
    if not done.wait(hook.timeout):
        run.timed_out = True
        return run
    if "error" in box:
        run.error = box["error"]
        return run
    run.code = 0
    run.stdout = box["text"]
    verdict = _verdict(box["text"])
    if verdict is None:
        run.json_error = 'the model did not answer {"ok": true|false, "reason": ...}'
    elif verdict["ok"] is False and not verdict.get("impossible"):
        reason = verdict.get("reason")
        run.data = {"decision": "block"}
        if isinstance(reason, str) and reason.strip():
            run.data["reason"] = reason.strip()
    else:
        run.data = {}
    return run
