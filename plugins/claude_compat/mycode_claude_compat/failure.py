"""``StopFailure``: the turn ended on a model error (Claude Code 2.1.x) — a rate limit, a
rejected key, a server error. The hooks are told, and their output is ignored, as in Claude
Code (a notifier, a log); they match on the kind of error."""

from __future__ import annotations

import re
from typing import Any

_STATUS = re.compile(r"\bHTTP (\d{3})\b")


def error_kind(message: str) -> str:
    """Claude Code's name for the kind of a model error (what a ``StopFailure`` matcher
    matches): ``rate_limit``, ``authentication_failed``, ``billing_error``,
    ``invalid_request``, ``server_error``, ``max_output_tokens`` or ``unknown``."""
    found = _STATUS.search(message)
    status = int(found.group(1)) if found else 0
    if status == 429 or "rate limit" in message.lower():
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    if status == 402:
        return "billing_error"
    if status >= 500:
        return "server_error"
    if status >= 400:
        return "invalid_request"
    if "reply cap" in message:  # the core's line for replies the output limit cut every time
        return "max_output_tokens"
    return "unknown"


def stop_failure(event: Any, state: Any) -> None:
    """Fire ``StopFailure`` for a ``result`` that ended on a model error."""
    details = str(event.error or "")
    kind = error_kind(details)
    state.fire(
        "StopFailure",
        kind,
        error=kind,
        error_details=details,
        last_assistant_message=event.final_text or None,
    )
