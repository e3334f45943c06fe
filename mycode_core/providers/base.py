"""What every model provider returns and raises.

A provider is any object with a ``model_id`` and
``complete(messages, tools, on_text) -> ModelReply`` that streams text through ``on_text`` and
raises a :class:`ModelError` (``openai_compat.OpenAICompatibleModel``, ``scripted.ScriptedModel``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ReplyToolCall(BaseModel):
    """A tool call as the model sent it (arguments still a JSON string)."""

    id: str | None = None
    name: str
    arguments: str = ""


class ModelReply(BaseModel):
    """One model turn."""

    content: str | None = None
    tool_calls: list[ReplyToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    refusal: str | None = None


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


class RateLimited(ModelError):
    kind = "rate_limit"
    retryable = True


class ModelTimeout(ModelError):
    kind = "timeout"
    retryable = True


class ConnectionFailed(ModelError):
    kind = "connection_error"
    retryable = True


class ServerError(ModelError):
    kind = "server_error"
    retryable = True


class BrokenStream(ModelError):
    kind = "broken_stream"
    retryable = True


class ContextLengthExceeded(ModelError):
    kind = "context_length"


class FatalModelError(ModelError):
    """Bad request, auth, unknown model: retrying will not help."""

    kind = "model_error"
