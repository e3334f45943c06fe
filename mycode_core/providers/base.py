"""What every model provider returns and raises: ``complete(messages, tools, on_text)`` streams
text through ``on_text`` and returns a :class:`ModelReply` or raises a :class:`ModelError`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ReplyToolCall(BaseModel):
    """A tool call as the model sent it (arguments still a JSON string)."""

    model_config = ConfigDict(defer_build=True)  # built at first use, not at start-up

    id: str | None = None
    name: str
    arguments: str = ""


class ModelReply(BaseModel):
    """One model turn."""

    model_config = ConfigDict(defer_build=True)  # built at first use, not at start-up

    content: str | None = None
    tool_calls: list[ReplyToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    refusal: str | None = None
    reasoning: str | None = None  # thinking the server sent apart (never sent back to it)


def call_model(
    model: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    on_text: Callable[[str], None],
    *,
    max_tokens: int | None = None,
    purpose: str | None = None,
    on_reasoning: Callable[[str], None] | None = None,
) -> ModelReply:
    """``model.complete`` with only the request parameters the provider accepts (all of them
    with ``**kwargs``)."""
    given = {"max_tokens": int(max_tokens or 0), "purpose": purpose, "on_reasoning": on_reasoning}
    extra = {key: value for key, value in given.items() if value}
    if extra:
        try:
            parameters = dict(inspect.signature(model.complete).parameters)
        except (TypeError, ValueError):
            parameters = {}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            extra = {key: value for key, value in extra.items() if key in parameters}
    reply: ModelReply = model.complete(messages, tools, on_text, **extra)
    return reply


class ModelError(Exception):
    """A failed model call. ``retryable`` errors get bounded retries with backoff."""

    kind = "model_error"
    retryable = False

    def __init__(
        self, message: str, *, retry_after: float | None = None, status: int | None = None
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class RetryableModelError(ModelError):
    """A failure that may pass: the loop backs off and calls the model again."""

    retryable = True


class RateLimited(RetryableModelError):
    """HTTP 429 or a provider's rate-limit error (``retry_after`` when it said)."""

    kind = "rate_limit"


class ModelTimeout(RetryableModelError):
    """No answer (or no next chunk) in time."""

    kind = "timeout"


class ConnectionFailed(RetryableModelError):
    """The server could not be reached, or dropped the connection."""

    kind = "connection_error"


class ServerError(RetryableModelError):
    """HTTP 5xx, or an error the server sent inside the stream."""

    kind = "server_error"


class ServerLoading(ServerError):
    """llama-server's 503 ``Loading model``: waited for apart from ``max_retries``."""

    kind = "loading"


class BrokenStream(RetryableModelError):
    """The streamed reply broke off or could not be parsed."""

    kind = "broken_stream"


class ContextLengthExceeded(ModelError):
    """The request is longer than the model's context window (the view is compacted)."""

    kind = "context_length"


class FatalModelError(ModelError):
    """Bad request, auth, unknown model: retrying will not help."""

    kind = "model_error"
