"""Any OpenAI-compatible chat-completions endpoint: body from :mod:`.wire`, POST by :mod:`.http`,
stream read by :mod:`.sse`; failures are classified, never retried here (the runner retries)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from mycode_core.providers import base
from mycode_core.providers.sse import (
    accumulate_sse,
    looks_like_context_overflow,
    one_line,
    reply_from_completion,
)
from mycode_core.providers.stdhttp import ChatClient, ConnectFailure, RequestTimedOut, StatusFailure
from mycode_core.providers.wire import RequestBuilder

PLACEHOLDER_KEY = "sk-no-key-required"


def _retry_after(headers: Any) -> float | None:
    """``Retry-After-Ms`` or ``Retry-After`` in seconds (an HTTP date is not read: ``None``)."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        with contextlib.suppress(TypeError, ValueError):
            return float(headers.get(name)) / scale
    return None


def _error_message(exc: StatusFailure) -> str:
    """What the server said on one line, else its status's phrase."""
    said = exc.message.removeprefix(f"{exc.status_code} ")  # nginx's title: "502 Bad Gateway"
    if not said:
        with contextlib.suppress(ValueError):
            said = HTTPStatus(exc.status_code).phrase
    return one_line(said)


DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
UNKNOWN_HOST = ("Name or service not known", "nodename nor servname")  # glibc's, macOS's
KEY_HINT = (
    "check the API key: pass --api-key KEY or set MYCODE_API_KEY (or OPENAI_API_KEY) "
    "for this server"
)


def _connection_error(exc: BaseException, base_url: str, answered: bool) -> base.ModelError:
    """Fatal when retrying at once will not help (the causes looked at): an unknown host, or a
    local server refusing before it ever ``answered``."""
    import socket
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    seen: list[BaseException] = []
    item: BaseException | None = exc
    while item is not None and item not in seen and len(seen) < 10:
        seen.append(item)
        text = str(item)
        if isinstance(item, ConnectionRefusedError) or "Connection refused" in text:
            if host in LOCAL_HOSTS and not answered:
                return base.FatalModelError(
                    f"cannot reach the model server at {base_url}: connection refused — is the "
                    "server running? (check --base-url / MYCODE_BASE_URL)"
                )
            break
        if isinstance(item, socket.gaierror) or any(marker in text for marker in UNKNOWN_HOST):
            return base.FatalModelError(
                f"cannot reach the model server at {base_url}: unknown host {host!r} "
                "(check --base-url / MYCODE_BASE_URL)"
            )
        item = item.__cause__ or item.__context__
    cause = exc.__cause__ or exc
    return base.ConnectionFailed(f"cannot reach the model server at {base_url}: {cause}")


# llama-server's 500s that no retry will change (how it was started does not fit the request)
SETUP_ERRORS = (
    (
        "requires --jinja",  # llama-server --no-jinja, asked with tools
        "the server needs its chat template to take tool definitions: restart llama-server "
        "with --jinja",
    ),
    (
        "input is not supported - hint",  # llama-server without --mmproj, sent an image
        "this server takes no images: start llama-server with the model's --mmproj file, or "
        'set images = false ([models."NAME"] images = false) for this model',
    ),
)


def _status_error(status: int, message: str, headers: Any, url: str) -> base.ModelError:
    text = f"HTTP {status}: {message}"
    if status in (401, 403):
        return base.FatalModelError(f"{text} — {KEY_HINT} ({url})", status=status)
    hint = next((hint for marker, hint in SETUP_ERRORS if marker in message), None)
    if hint is not None:
        return base.FatalModelError(f"{text} — {hint} ({url})", status=status)
    if status == 429:
        return base.RateLimited(text, retry_after=_retry_after(headers), status=status)
    if status == 503 and "loading model" in message.lower():
        return base.ServerLoading(
            f"{text} (the server is still loading its model)", retry_after=2.0
        )
    if status in (408, 409) or status >= 500:
        return base.ServerError(text, retry_after=_retry_after(headers), status=status)
    if status in (400, 413, 422) and looks_like_context_overflow(message):
        return base.ContextLengthExceeded(text, status=status)
    return base.FatalModelError(text, status=status)


def classify(
    exc: Exception, base_url: str | None = None, answered: bool = False
) -> base.ModelError:
    """Map a request failure to our error classes; ``base_url`` is named in connection errors.
    An unknown host, or a local server that refuses and has not ``answered`` yet, is fatal."""
    url = base_url or DEFAULT_BASE_URL
    if isinstance(exc, base.ModelError):
        return exc
    if isinstance(exc, RequestTimedOut):
        return base.ModelTimeout(f"the model request to {url} timed out")
    if isinstance(exc, ConnectFailure):
        return _connection_error(exc, url, answered)
    if isinstance(exc, StatusFailure):
        return _status_error(exc.status_code, _error_message(exc), exc.headers, url)
    return base.BrokenStream(f"the model stream broke: {type(exc).__name__}: {exc}")


class OpenAICompatibleModel:
    """A chat-completions model behind an OpenAI-compatible endpoint."""

    def __init__(self, model_id: str, settings: Any) -> None:
        self.model_id = model_id
        self.settings = settings
        self.stream = bool(getattr(settings, "stream", True))
        self.send_stream_options = True
        self._active: Any = None
        self.answered = False  # the server answered a request (a refusal now is retried)
        self._client: Any = None
        self._builder = RequestBuilder()
        self.template_caps: dict[str, Any] = {}  # llama.cpp's, once discovery asked

    @property
    def client(self) -> Any:
        """The HTTP client (made anew after a cancelled request closed the previous one)."""
        if self._client is None:
            self._client = ChatClient(
                base_url=self.settings.base_url or DEFAULT_BASE_URL,
                api_key=self.settings.api_key or PLACEHOLDER_KEY,
                timeout=float(getattr(self.settings, "request_timeout", 600.0)),
            )
        return self._client

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        *,
        max_tokens: int | None = None,
        purpose: str | None = None,
        on_reasoning: Callable[[str], None] | None = None,
    ) -> base.ModelReply:
        """One model turn (``purpose`` unused here); raises a classified :class:`ModelError`."""
        models = getattr(self.settings, "models", None) or {}
        entry = models.get(getattr(self.settings, "model", None)) or models.get(self.model_id)
        params: dict[str, Any] = dict(getattr(entry, "request", None) or {})
        if max_output := max_tokens or getattr(self.settings, "max_output_tokens", None):
            params["max_tokens"] = int(max_output)
        hear = (on_text, on_reasoning)
        try:
            try:
                return self._request(messages, tools, params, hear)
            except StatusFailure as exc:
                rejected = exc.status_code == 400 and "stream_options" in _error_message(exc)
                if self.stream and self.send_stream_options and rejected:
                    self.send_stream_options = False  # the server rejects it: never send again
                    return self._request(messages, tools, params, hear)
                raise
        except base.ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified
            raise classify(exc, self.settings.base_url, self.answered) from exc

    def discover_context_window(self) -> Any:
        """The model's ``Limits`` as the server reports them (none without a base URL)."""
        from mycode_core.providers.discovery import Limits, discover_context_window

        url, key = self.settings.base_url, self.settings.api_key
        if not url:
            return Limits(None)
        return discover_context_window(str(url), self.model_id, key, 3.0, self.template_caps)

    def abort(self) -> None:
        """Cut the request in flight (the user cancelled), even one still waiting for headers."""
        active, client = self._active, self._client
        self._active, self._client = None, None
        if active is not None:
            active.close()
        if client is not None:
            client.close()

    def _request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        params: dict[str, Any],
        hear: tuple[Callable[[str], None], Callable[[str], None] | None],
    ) -> base.ModelReply:
        """POST the body to ``/chat/completions`` and read the (streamed) reply."""
        if self.stream:
            params = {**params, "stream": True}
            if self.send_stream_options:
                params["stream_options"] = {"include_usage": True}
        body = self._builder.body(self.model_id, messages, tools, params)
        response = self.client.post("/chat/completions", body, stream=self.stream)
        self._active, self.answered = response, True
        try:
            kind = response.headers.get("content-type", "")  # JSON answering a stream request too
            if not self.stream or ("text/event-stream" not in kind and "json" in kind):
                return reply_from_completion(json.loads(response.read()), *hear)
            return accumulate_sse(response.iter_lines(), *hear)
        finally:
            self._active = None
            response.close()
