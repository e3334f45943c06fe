"""``scripted:PATH``: plays a JSON file of model turns through the real loop (SPEC §6); a turn
may also hold a ``delay`` or an ``error`` to rehearse recovery. Internal requests (``purpose``
set) are answered deterministically from the request and consume no turn."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mycode_core.providers import base
from mycode_core.providers.base import ModelReply, ReplyToolCall
from mycode_core.tokens import count_text

END_OF_SCRIPT_TEXT = "Done."

ERRORS: dict[str, type[base.ModelError]] = {
    "rate_limit": base.RateLimited,
    "timeout": base.ModelTimeout,
    "connection_error": base.ConnectionFailed,
    "server_error": base.ServerError,
    "broken_stream": base.BrokenStream,
    "context_length": base.ContextLengthExceeded,
    "model_error": base.FatalModelError,
}


class ScriptError(ValueError):
    """The script file is missing or malformed."""


def load_script(path: Path) -> list[dict[str, Any]]:
    """Read and check a script file; raise :class:`ScriptError` with a readable message."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScriptError(f"scripted model file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise ScriptError(f"cannot read scripted model file {path}: {exc}") from None
    if isinstance(data, dict):
        data = data.get("turns", data.get("messages"))
    if not isinstance(data, list) or not all(isinstance(turn, dict) for turn in data):
        raise ScriptError(f"scripted model file {path} must hold a JSON list of turn objects")
    return data


class ScriptedModel:
    """Replays turns in order, one per model call."""

    def __init__(self, model_id: str, settings: Any) -> None:
        self.model_id = model_id
        self.path = Path(model_id.split(":", 1)[1]).expanduser()
        self.turns = load_script(self.path)
        self.position = 0
        self._lock = threading.Lock()
        self._aborted = threading.Event()

    def abort(self) -> None:
        """Cut a pending ``delay`` short (the user cancelled)."""
        self._aborted.set()

    def fork(self) -> ScriptedModel:
        """A child agent's model: this same script, so the turns play in order across the tree."""
        return self

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        *,
        max_tokens: int | None = None,
        purpose: str | None = None,
    ) -> ModelReply:
        """The script's next turn; an internal request (``purpose``) consumes no turn."""
        if purpose:
            text = internal_answer(messages, purpose, max_tokens)
            usage = {"input_tokens": 0, "output_tokens": count_text(text)}
            return ModelReply(content=text, finish_reason="stop", usage=usage)
        self._aborted.clear()
        with self._lock:
            turn = self.turns[self.position] if self.position < len(self.turns) else None
            self.position += 1
        if turn is None:
            turn = {"content": END_OF_SCRIPT_TEXT}
        delay = turn.get("delay")
        if isinstance(delay, (int, float)) and delay > 0:
            if self._aborted.wait(min(float(delay), 10.0)):
                raise base.BrokenStream("the request was cancelled")
        if "error" in turn:
            error = turn["error"]
            error = error if isinstance(error, dict) else {"kind": str(error)}
            cls = ERRORS.get(str(error.get("kind")), base.FatalModelError)
            retry_after = error.get("retry_after")
            raise cls(
                str(error.get("message") or f"scripted {error.get('kind')}"),
                retry_after=float(retry_after) if isinstance(retry_after, (int, float)) else None,
            )
        content = turn.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        text = content or ""
        for start in range(0, len(text), 24):  # streamed in pieces, as a server sends it
            on_text(text[start : start + 24])
        calls = []
        for index, raw in enumerate(turn.get("tool_calls") or ()):
            if not isinstance(raw, dict):
                continue
            nested = raw.get("function")
            function: dict[str, Any] = nested if isinstance(nested, dict) else raw
            arguments = function.get("arguments", {})
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            name = str(function.get("name") or f"unnamed_{index}")
            calls.append(ReplyToolCall(id=raw.get("id") or None, name=name, arguments=arguments))
        finish = turn.get("finish_reason") or ("tool_calls" if calls else "stop")
        usage = {"input_tokens": 0, "output_tokens": count_text(text)}
        return ModelReply(
            content=content or None, tool_calls=calls, finish_reason=finish, usage=usage
        )


SUMMARY_LINES = 12


def internal_answer(messages: list[dict[str, Any]], purpose: str, max_tokens: int | None) -> str:
    """A deterministic reply to an internal request (a summary lists its ``CALL`` lines)."""
    text = "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
    if purpose != "summary":
        return f"(scripted {purpose}: no model)"
    calls = [line.strip() for line in text.splitlines() if line.strip().startswith("CALL ")]
    results = sum(1 for line in text.splitlines() if line.startswith("RESULT of "))
    shown = [f"- {line[5:][:160]}" for line in calls[-SUMMARY_LINES:]]
    if len(calls) > len(shown):
        shown.insert(0, f"- … {len(calls) - len(shown)} earlier calls")
    body = "\n".join(
        [
            "## Goal\n(see the task above)",
            f"## Progress\n{len(calls)} tool calls, {results} results in the removed turns.",
            *(["## Calls", *shown] if shown else []),
            "## Next steps\nContinue the task.",
        ]
    )
    return body[: max(40, int(max_tokens or 4_000)) * 3]
