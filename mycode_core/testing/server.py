"""A local OpenAI-compatible chat-completions endpoint for tests (stdlib only)."""

from __future__ import annotations

import json
import queue
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mycode_core.testing.responses import (
    DEFAULT_FINAL_TEXT,
    LLAMA_CPP_OVERFLOW,
    LOADING_MODEL,
    NO_JINJA_TOOLS,
    NO_MMPROJ_IMAGE,
    OPENAI_OVERFLOW,
    FakeResponse,
    completion_body,
    has_image,
    http_error,
    stream_chunks,
    turn,
)
from mycode_core.testing.responses import NO_LIMIT_OVERFLOW as NO_LIMIT_OVERFLOW
from mycode_core.testing.responses import OPENROUTER_OVERFLOW as OPENROUTER_OVERFLOW


@dataclass
class RecordedRequest:
    """One request the fake server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float
    """``time.monotonic()`` when the request line arrived."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a chat-completions request (``[]`` otherwise)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one response per connection; a stream ends at close

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the default access log."""

    def _write(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if body and "text/event-stream" not in headers.get("Content-Type", ""):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _key_refused(self) -> bool:
        """With ``api_key`` set, answer a request without that key (``Authorization: Bearer``
        or ``X-Api-Key``) with llama.cpp's 401 and return ``True``; ``/health`` is public."""
        key = self.server.fake.api_key
        if key is None or self.path.split("?")[0].rstrip("/").endswith("/health"):
            return False
        given = self.headers.get("Authorization") or self.headers.get("X-Api-Key") or ""
        if given.removeprefix("Bearer ") == key:
            return False
        error = {"message": "Invalid API Key", "type": "authentication_error", "code": 401}
        body = json.dumps({"error": error}).encode()
        self._write(401, {"Content-Type": "application/json"}, body)
        return True

    def _still_loading(self) -> bool:
        """While ``loading`` requests are left, answer this one as a ``llama-server`` still
        loading its model does (503 ``Loading model``, whatever the path) and return ``True``."""
        fake = self.server.fake
        with fake._changed:
            loading, fake.loading = fake.loading, fake.loading - 1
        if loading <= 0:
            return False
        self._write(503, {"Content-Type": "application/json"}, json.dumps(LOADING_MODEL).encode())
        return True

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """``GET /v1/models`` lists one model; anything else is 404."""
        fake = self.server.fake
        fake._record(self, None, time.monotonic())
        if self._still_loading() or self._key_refused():
            return
        if self.path.rstrip("/").endswith("/models"):
            entry = {"id": fake.model, "object": "model", **fake.model_metadata}
            data = {"object": "list", "data": [entry]}
            self._write(200, {"Content-Type": "application/json"}, json.dumps(data).encode())
        elif fake.props is not None and self.path.rstrip("/").endswith("/props"):
            self._write(200, {"Content-Type": "application/json"}, json.dumps(fake.props).encode())
        else:
            self._write(404, {"Content-Type": "application/json"}, b'{"error":{"message":"no"}}')

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """Record the request and answer with the next queued response."""
        started = time.monotonic()
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparseable": raw.decode("utf-8", "replace")}
        fake._record(self, body, started)
        if self._still_loading() or self._key_refused():
            return
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._write(404, {"Content-Type": "application/json"}, b'{"error":{"message":"no"}}')
            return
        wants_stream = isinstance(body, dict) and bool(body.get("stream"))
        if not fake.jinja and isinstance(body, dict) and body.get("tools"):
            error = {"code": 500, "message": NO_JINJA_TOOLS, "type": "server_error"}
            reply = http_error(500, body={"error": error})
        elif not fake.vision and has_image(body):
            error = {"code": 500, "message": NO_MMPROJ_IMAGE, "type": "server_error"}
            reply = http_error(500, body={"error": error})
        elif fake.reject_stream_options and isinstance(body, dict) and "stream_options" in body:
            reply = http_error(
                400,
                "Unrecognized request argument supplied: stream_options",
                error_type="invalid_request_error",
            )
        else:
            reply = fake._answer(body if isinstance(body, dict) else {})
        if reply.delay and fake._stopping.wait(reply.delay):
            return  # the server stopped while this answer waited: its client is gone
        if reply.kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.kind == "cut":
            self._write(200, reply.headers, b"")
            for chunk in reply.chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
            if reply.hold:
                fake._stopping.wait(reply.hold)
            return
        if reply.kind == "turn":
            spec = reply.turn or {}
            if fake.context_window is not None and isinstance(body, dict):
                spec = {**spec, "usage": {**(spec.get("usage") or {}), **fake._usage(body)}}
            if wants_stream:
                data = b"".join(stream_chunks(spec, fake.model))
                self._write(200, {"Content-Type": "text/event-stream"}, data)
            else:
                data = json.dumps(completion_body(spec, fake.model)).encode()
                self._write(200, {"Content-Type": "application/json"}, data)
            return
        self._write(reply.status, reply.headers, reply.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Keep a handler's failure out of whatever ``sys.stderr`` is at that moment.

        A client hanging up is what cancellation tests do, so it is not an error. Anything
        else is kept in ``fake.errors`` and written to the process's real stderr: the
        stdlib default prints to ``sys.stderr``, which a later test's ``CliRunner`` may have
        swapped for its own captured output.
        """
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return
        text = traceback.format_exc()
        self.fake.errors.append(text)
        if sys.__stderr__ is not None:
            sys.__stderr__.write(f"fake server: request from {client_address} failed\n{text}")


class FakeOpenAIServer:
    """A local OpenAI-compatible endpoint answering from a queue of scripted responses.

    Use it as a context manager; ``base_url`` is ``http://127.0.0.1:PORT/v1``. Each
    ``POST .../chat/completions`` takes the next queued :class:`FakeResponse`; when the queue
    is empty the answer is a plain final text (``final_text``). Every request (method, path,
    headers with lower-case names, parsed JSON body) is appended to ``requests``.
    ``reject_stream_options=True`` answers any request carrying ``stream_options`` with a 400
    that names it, as some servers do. ``context_window=N`` rejects a request whose prompt
    (counted as :meth:`prompt_tokens`) plus ``max_tokens`` exceeds ``N`` with a 400 phrased as
    ``overflow_message``, and reports the counted ``prompt_tokens`` as usage; with
    :data:`LLAMA_CPP_OVERFLOW` only the prompt counts, as with llama-server (a ``max_tokens``
    beyond the window is no error there: the reply ends at the window, ``finish_reason:
    length``).
    ``side_responder(body)`` may answer a request before the queue (e.g. summaries asked
    without tools). ``model_metadata`` is merged into the ``/v1/models`` entry (vLLM's
    ``max_model_len``, llama.cpp's ``meta``); ``props`` is served at ``/props``.
    ``api_key="K"`` answers every request but ``/health`` that does not carry the key
    (``Authorization: Bearer K`` or ``X-Api-Key: K``) with a 401 ``Invalid API Key``, as
    ``llama-server --api-key K`` does (its ``/v1/models`` and ``/props`` included).
    ``jinja=False`` answers a request with ``tools`` as ``llama-server --no-jinja`` does: HTTP
    500, ``server_error``, :data:`NO_JINJA_TOOLS`, however often it is asked;
    ``vision=False`` answers a request with an image as a ``llama-server`` without
    ``--mmproj`` does (500, :data:`NO_MMPROJ_IMAGE`). ``loading=N`` answers the first ``N``
    requests (any path) as a ``llama-server`` still loading its model does (503,
    :data:`LOADING_MODEL`).

    Different conversations (a parent agent and its child agents) can be scripted apart with
    :meth:`route`: a request whose first user message or system prompt contains the route's
    text takes the route's next response instead.
    """

    def __init__(
        self,
        responses: Iterable[FakeResponse] = (),
        *,
        final_text: str = DEFAULT_FINAL_TEXT,
        model: str = "fake-model",
        reject_stream_options: bool = False,
        context_window: int | None = None,
        overflow_message: str = OPENAI_OVERFLOW,
        token_factor: float = 1.0,
        side_responder: Callable[[dict[str, Any]], FakeResponse | None] | None = None,
        model_metadata: Mapping[str, Any] | None = None,
        props: Mapping[str, Any] | None = None,
        api_key: str | None = None,
        jinja: bool = True,
        vision: bool = True,
        loading: int = 0,
    ) -> None:
        self.final_text = final_text
        self.loading = loading
        self.api_key = api_key
        self.jinja = jinja
        self.vision = vision
        self.model = model
        self.reject_stream_options = reject_stream_options
        self.context_window = context_window
        self.overflow_message = overflow_message
        self.token_factor = token_factor
        self.side_responder = side_responder
        self.model_metadata = dict(model_metadata or {})
        self.props = dict(props) if props is not None else None
        self.overflows = 0
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        """Tracebacks of requests the handler failed on (a client hanging up is not one)."""
        self._stopping = threading.Event()
        self._queue: queue.Queue[FakeResponse] = queue.Queue()
        self._changed = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._routes: list[tuple[str, queue.Queue[FakeResponse]]] = []
        self.enqueue(*responses)

    # -- life cycle

    def start(self) -> FakeOpenAIServer:
        """Start serving on a random port of 127.0.0.1 (idempotent)."""
        if self._server is None:
            self._stopping.clear()
            server = _Server(("127.0.0.1", 0), _Handler)
            server.fake = self
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever, args=(0.02,), daemon=True, name="fake-openai-server"
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; answers still waiting out a delay are dropped."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port served on."""
        if self._server is None:
            raise RuntimeError("the fake server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to pass as ``--base-url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def cli_args(
        self, prompt: str | None = None, *, output_format: str | None = None, model: str = "m"
    ) -> list[str]:
        """``mycode`` flags that point a run at this server: ``[-p PROMPT] --model M
        --base-url URL --api-key KEY [--output-format FORMAT]`` (``KEY``: ``api_key``, else
        ``x``)."""
        args = [] if prompt is None else ["-p", prompt]
        args += ["--model", model, "--base-url", self.base_url, "--api-key", self.api_key or "x"]
        if output_format is not None:
            args += ["--output-format", output_format]
        return args

    # -- the queue

    def enqueue(self, *responses: FakeResponse) -> None:
        """Add responses to the end of the queue."""
        for response in responses:
            self._queue.put(response)

    def route(self, contains: str, *responses: FakeResponse) -> None:
        """Answer the conversation whose first user message or system prompt contains
        ``contains`` with ``responses`` (in order, then the plain final text), whatever the
        main queue holds. Routes are tried in the order they were added; calling it again
        with the same text adds to that route."""
        for text, pending in self._routes:
            if text == contains:
                for response in responses:
                    pending.put(response)
                return
        pending = queue.Queue()
        for response in responses:
            pending.put(response)
        self._routes.append((contains, pending))

    def _route_for(self, body: Any) -> queue.Queue[FakeResponse] | None:
        if not self._routes or not isinstance(body, dict):
            return None
        messages = body.get("messages") or []
        empty: dict[str, Any] = {}
        system = next((m for m in messages if m.get("role") == "system"), empty)
        user = next((m for m in messages if m.get("role") == "user"), empty)
        texts = [str(system.get("content") or ""), str(user.get("content") or "")]
        for text, pending in self._routes:
            if any(text in part for part in texts):
                return pending
        return None

    def _next_response(self, body: Any = None) -> FakeResponse:
        pending = self._route_for(body)
        try:
            return (pending if pending is not None else self._queue).get_nowait()
        except queue.Empty:
            return turn(self.final_text, usage={"prompt_tokens": 10, "completion_tokens": 3})

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        """How many tokens this server counts in a request (our tokenizer × ``token_factor``)."""
        from mycode_core.tokens import count_message, count_text

        messages = body.get("messages") or []
        raw = sum(count_message(m) for m in messages if isinstance(m, dict))
        if body.get("tools"):
            raw += count_text(json.dumps(body["tools"], ensure_ascii=False))
        return int(raw * self.token_factor)

    def _usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens(body)}

    def _answer(self, body: dict[str, Any]) -> FakeResponse:
        """Enforce ``context_window`` (a 400 in the configured phrasing), then ask
        ``side_responder``, then the queue."""
        if self.context_window is not None:
            requested = self.prompt_tokens(body)
            completion = int(body.get("max_tokens") or 0)
            if self.overflow_message == LLAMA_CPP_OVERFLOW:
                completion = 0  # llama-server: the prompt alone (a reply stops at the window)
            if requested + completion > self.context_window:
                self.overflows += 1
                message = self.overflow_message.format(
                    limit=self.context_window,
                    requested=requested + completion,
                    prompt=requested,
                    completion=completion,
                )
                if self.overflow_message == LLAMA_CPP_OVERFLOW:  # llama-server's own body
                    error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
                    error.update(n_prompt_tokens=requested, n_ctx=self.context_window)
                    return http_error(400, body={"error": error})
                return http_error(
                    400, message, error_type="invalid_request_error", code="context_length_exceeded"
                )
        if self.side_responder is not None:
            answer = self.side_responder(body)
            if answer is not None:
                return answer
        return self._next_response(body)

    @property
    def pending(self) -> int:
        """How many queued responses are not yet used."""
        return self._queue.qsize()

    # -- what was received

    def _record(self, handler: BaseHTTPRequestHandler, body: Any, at: float) -> None:
        headers = {name.lower(): value for name, value in handler.headers.items()}
        request = RecordedRequest(handler.command, handler.path, headers, body, at)
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat-completions requests received, in order."""
        return [
            r
            for r in self.requests
            if r.method == "POST" and r.path.split("?")[0].rstrip("/").endswith("/chat/completions")
        ]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` chat-completions requests arrived; ``False`` on timeout."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.chat_requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True
