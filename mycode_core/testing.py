"""Helpers for testing mycode and its plugins, the way ``llm`` gives plugin authors a mock model.

* :class:`FakeOpenAIServer` — a local OpenAI-compatible chat-completions endpoint (stdlib
  ``http.server`` on 127.0.0.1, random port) that answers from a queue of scripted responses
  and records every request. Build responses with :func:`turn`, :func:`completion`,
  :func:`sse_stream`, :func:`raw_sse`, :func:`http_error`, :func:`dropped_connection`,
  :func:`cut_stream` and :func:`delayed`.
* :func:`write_script` — write a scripted-model file (SPEC §6) and get its ``--model`` id.
* :func:`run_cli` — run ``mycode`` as a real subprocess and parse its stream-json output.
* :func:`make_context`, :func:`make_plugin_manager`, :func:`call_tool` — build a run context
  and a plugin manager, and call a tool the way the core does, for unit tests.
* :func:`write_plugin_dist` — make a real entry-point plugin in a folder for ``PYTHONPATH``.

This module imports neither ``openai`` nor ``mcp``.

Example::

    from mycode_core.testing import FakeOpenAIServer, run_cli, turn

    with FakeOpenAIServer([turn(content="hello")]) as server:
        rc, events, out, err = run_cli(
            ["-p", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", "x",
             "--output-format", "stream-json"], cwd=workspace, home=home)
    assert events[-1]["stop_reason"] == "completed"
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

from mycode_core.config import Settings
from mycode_core.records import RunContext, Tool, ToolResult

DEFAULT_FINAL_TEXT = "All done."
FAST_RETRY_CONFIG = "retry_base_delay = 0.01\nretry_max_delay = 0.05\n"
"""A ``config.toml`` snippet that makes the runner's retries near-instant."""

# --------------------------------------------------------------------------- responses


@dataclass
class FakeResponse:
    """One scripted answer of :class:`FakeOpenAIServer`; build it with the helper functions.

    ``kind`` is ``turn`` (SSE or JSON, whichever the request asked for), ``body`` (fixed
    bytes with ``status`` and ``headers``), ``drop`` (close the socket without answering) or
    ``cut`` (send ``chunks`` of a stream, then close without ``finish_reason`` or ``[DONE]``).
    """

    kind: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: list[bytes] = field(default_factory=list)
    turn: dict[str, Any] | None = None
    delay: float = 0.0


def _call_entries(tool_calls: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    calls = []
    for call in tool_calls or ():
        arguments = call.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append({"id": call.get("id"), "name": str(call["name"]), "arguments": arguments})
    return calls


def turn(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    omit_index: bool = False,
    chunk_size: int = 8,
) -> FakeResponse:
    """A model turn, sent as SSE when the request asks to stream and as JSON otherwise.

    ``tool_calls`` are ``{"name", "arguments" (object or JSON string), "id"?}``; a call
    without ``id`` is sent without one. ``usage`` is ``{"prompt_tokens",
    "completion_tokens"}``. ``omit_index`` leaves ``index`` out of tool-call deltas, as some
    servers do.
    """
    return FakeResponse(
        kind="turn",
        turn={
            "content": content,
            "tool_calls": _call_entries(tool_calls),
            "finish_reason": finish_reason,
            "usage": dict(usage) if usage else None,
            "omit_index": omit_index,
            "chunk_size": max(1, chunk_size),
        },
    )


def _finish(spec: Mapping[str, Any]) -> str:
    return str(spec.get("finish_reason") or ("tool_calls" if spec.get("tool_calls") else "stop"))


def _usage_block(usage: Mapping[str, int]) -> dict[str, int]:
    prompt = int(usage.get("prompt_tokens", 0))
    completion_tokens = int(usage.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion_body(spec: Mapping[str, Any], model: str = "fake-model") -> dict[str, Any]:
    """A ``chat.completion`` object for a turn spec (as made by :func:`turn`)."""
    message: dict[str, Any] = {"role": "assistant", "content": spec.get("content")}
    calls = spec.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                **({"id": c["id"]} if c.get("id") else {}),
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(spec)}],
    }
    if spec.get("usage"):
        body["usage"] = _usage_block(spec["usage"])
    return body


def _sse(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {text}\n\n".encode()


def stream_chunks(
    spec: Mapping[str, Any], model: str = "fake-model", *, finish: bool = True
) -> list[bytes]:
    """The SSE events of a turn spec; with ``finish=False`` no finish_reason, usage or [DONE]."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return _sse({**base, "choices": [choice]})

    size = int(spec.get("chunk_size") or 8)
    out = [chunk({"role": "assistant", "content": ""})]
    content = spec.get("content") or ""
    out += [chunk({"content": content[i : i + size]}) for i in range(0, len(content), size)]
    for index, call in enumerate(spec.get("tool_calls") or []):
        head: dict[str, Any] = {"type": "function",
                                "function": {"name": call["name"], "arguments": ""}}
        if call.get("id"):
            head["id"] = call["id"]
        if not spec.get("omit_index"):
            head["index"] = index
        out.append(chunk({"tool_calls": [head]}))
        arguments = call["arguments"]
        for i in range(0, len(arguments), size):
            part: dict[str, Any] = {"function": {"arguments": arguments[i : i + size]}}
            if not spec.get("omit_index"):
                part["index"] = index
            out.append(chunk({"tool_calls": [part]}))
    if not finish:
        return out
    out.append(chunk({}, _finish(spec)))
    if spec.get("usage"):
        out.append(_sse({**base, "choices": [], "usage": _usage_block(spec["usage"])}))
    out.append(_sse("[DONE]"))
    return out


def completion(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
) -> FakeResponse:
    """Always a JSON ``chat.completion`` body, even if the request asked to stream."""
    spec = turn(content, tool_calls, finish_reason=finish_reason, usage=usage).turn or {}
    return FakeResponse(
        kind="body",
        headers={"Content-Type": "application/json"},
        body=json.dumps(completion_body(spec)).encode(),
    )


def sse_stream(
    content: str | None = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
    omit_index: bool = False,
) -> FakeResponse:
    """Always an SSE stream of the turn, even if the request did not ask to stream."""
    spec = turn(content, tool_calls, finish_reason=finish_reason, usage=usage,
                omit_index=omit_index).turn or {}
    return raw_sse(b"".join(stream_chunks(spec)))


def raw_sse(data: bytes | str) -> FakeResponse:
    """These exact bytes as a ``text/event-stream`` response with status 200."""
    raw = data.encode() if isinstance(data, str) else data
    return FakeResponse(kind="body", headers={"Content-Type": "text/event-stream"}, body=raw)


def http_error(
    status: int,
    message: str = "error",
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    error_type: str = "server_error",
    code: str | None = None,
) -> FakeResponse:
    """An HTTP error. ``body`` (a JSON value or bytes) replaces the OpenAI-style error object;
    ``headers`` may carry e.g. ``Retry-After``."""
    if body is None:
        body = {"error": {"message": message, "type": error_type, "code": code}}
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return FakeResponse(
        kind="body",
        status=status,
        headers={"Content-Type": "application/json", **dict(headers or {})},
        body=raw,
    )


def dropped_connection() -> FakeResponse:
    """Close the connection without sending any response."""
    return FakeResponse(kind="drop")


def cut_stream(content: str = "Partial answer that never", **turn_options: Any) -> FakeResponse:
    """Start a 200 SSE stream, send some chunks, then close without finish_reason or [DONE]."""
    spec = turn(content, **turn_options).turn or {}
    return FakeResponse(kind="cut", headers={"Content-Type": "text/event-stream"},
                        chunks=stream_chunks(spec, finish=False))


def delayed(seconds: float, response: FakeResponse | None = None) -> FakeResponse:
    """Wait ``seconds`` before answering with ``response`` (default: the plain final text)."""
    inner = response or turn(DEFAULT_FINAL_TEXT)
    return FakeResponse(kind=inner.kind, status=inner.status, headers=dict(inner.headers),
                        body=inner.body, chunks=list(inner.chunks), turn=inner.turn,
                        delay=inner.delay + seconds)


# --------------------------------------------------------------------------- the server


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

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """``GET /v1/models`` lists one model; anything else is 404."""
        fake = self.server.fake
        fake._record(self, None, time.monotonic())
        if self.path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": fake.model, "object": "model"}]}
            self._write(200, {"Content-Type": "application/json"}, json.dumps(data).encode())
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
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._write(404, {"Content-Type": "application/json"}, b'{"error":{"message":"no"}}')
            return
        wants_stream = isinstance(body, dict) and bool(body.get("stream"))
        if fake.reject_stream_options and isinstance(body, dict) and "stream_options" in body:
            reply = http_error(400, "Unrecognized request argument supplied: stream_options",
                               error_type="invalid_request_error")
        else:
            reply = fake._next_response()
        if reply.delay:
            time.sleep(reply.delay)
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
            return
        if reply.kind == "turn":
            spec = reply.turn or {}
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


class FakeOpenAIServer:
    """A local OpenAI-compatible endpoint answering from a queue of scripted responses.

    Use it as a context manager; ``base_url`` is ``http://127.0.0.1:PORT/v1``. Each
    ``POST .../chat/completions`` takes the next queued :class:`FakeResponse`; when the queue
    is empty the answer is a plain final text (``final_text``). Every request (method, path,
    headers with lower-case names, parsed JSON body) is appended to ``requests``.
    ``reject_stream_options=True`` answers any request carrying ``stream_options`` with a 400
    that names it, as some servers do.
    """

    def __init__(
        self,
        responses: Iterable[FakeResponse] = (),
        *,
        final_text: str = DEFAULT_FINAL_TEXT,
        model: str = "fake-model",
        reject_stream_options: bool = False,
    ) -> None:
        self.final_text = final_text
        self.model = model
        self.reject_stream_options = reject_stream_options
        self.requests: list[RecordedRequest] = []
        self._queue: queue.Queue[FakeResponse] = queue.Queue()
        self._changed = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.enqueue(*responses)

    # -- life cycle

    def start(self) -> FakeOpenAIServer:
        """Start serving on a random port of 127.0.0.1 (idempotent)."""
        if self._server is None:
            server = _Server(("127.0.0.1", 0), _Handler)
            server.fake = self
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, daemon=True,
                                            name="fake-openai-server")
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
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

    # -- the queue

    def enqueue(self, *responses: FakeResponse) -> None:
        """Add responses to the end of the queue."""
        for response in responses:
            self._queue.put(response)

    def _next_response(self) -> FakeResponse:
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return turn(self.final_text, usage={"prompt_tokens": 10, "completion_tokens": 3})

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
        return [r for r in self.requests
                if r.method == "POST" and r.path.split("?")[0].rstrip("/").endswith("/chat/completions")]

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


# --------------------------------------------------------------------------- scripted models


def write_script(path: Path, turns: Sequence[Mapping[str, Any]]) -> str:
    """Write a scripted-model file (SPEC §6) and return its ``--model`` id (``scripted:PATH``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(list(turns), indent=1), encoding="utf-8")
    return f"scripted:{path}"


# --------------------------------------------------------------------------- the CLI


class CliResult(NamedTuple):
    """What a ``mycode`` subprocess did: exit code, parsed stream-json events, raw output."""

    rc: int
    events: list[dict[str, Any]]
    stdout: str
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The events of one ``type``."""
        return [event for event in self.events if event.get("type") == kind]

    @property
    def result(self) -> dict[str, Any] | None:
        """The last ``result`` event, if any."""
        results = self.of_type("result")
        return results[-1] if results else None


ISOLATED_PREFIXES = ("MYCODE_", "OPENAI_")


def cli_env(home: Path, env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment for a test run: ours minus ``MYCODE_*``/``OPENAI_*``, plus ``env``.

    ``MYCODE_HOME`` is ``home``; a ``None`` value in ``env`` removes that variable.
    """
    out = {k: v for k, v in os.environ.items() if not k.startswith(ISOLATED_PREFIXES)}
    out["MYCODE_HOME"] = str(home)
    out.setdefault("PYTHONIOENCODING", "utf-8")
    for key, value in (env or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _parse_events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            events.append(data)
    return events


def mycode_command(use_script: bool = False) -> list[str]:
    """``[python, -m, mycode_core]``, or the ``mycode`` console script next to the interpreter."""
    if use_script:
        candidate = Path(sys.executable).with_name("mycode")
        if candidate.exists():
            return [str(candidate)]
    return [sys.executable, "-m", "mycode_core"]


def run_cli(
    args: Sequence[str],
    cwd: Path,
    home: Path,
    env: Mapping[str, str | None] | None = None,
    *,
    input: str | None = None,  # noqa: A002 - mirrors subprocess.run
    timeout: float = 60.0,
    use_script: bool = False,
) -> CliResult:
    """Run ``mycode ARGS`` as a real subprocess in ``cwd`` with ``MYCODE_HOME=home``.

    stdin is ``input`` (or empty); stdout lines that are JSON objects become ``events``.
    """
    home.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [*mycode_command(use_script), *args],
        cwd=str(cwd),
        env=cli_env(home, env),
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )
    return CliResult(completed.returncode, _parse_events(completed.stdout),
                     completed.stdout, completed.stderr)


# --------------------------------------------------------------------------- in-process helpers


def make_context(
    tmp_path: Path,
    *,
    settings: Settings | None = None,
    session_id: str = "test-session",
    interactive: bool = False,
    events: list[Any] | None = None,
) -> RunContext:
    """A :class:`RunContext` with workspace ``tmp_path/"workspace"`` and home ``tmp_path/"home"``.

    Events the code under test emits are appended to ``events`` if given.
    """
    workspace = (tmp_path / "workspace").resolve()
    home = (tmp_path / "home").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    return RunContext(
        workspace=workspace,
        home=home,
        settings=settings or Settings(),
        session_id=session_id,
        interactive=interactive,
        emit=events.append if events is not None else None,
    )


def make_plugin_manager(*plugins: object, load_entry_points: bool = False) -> Any:
    """A fresh plugin manager with the core's built-ins and ``plugins`` (no entry points)."""
    from mycode_core.plugins import get_plugin_manager

    return get_plugin_manager(extra_plugins=plugins, load_entry_points=load_entry_points)


def collect_tools(pm: Any, context: RunContext) -> dict[str, Tool]:
    """The tools every ``register_tools`` implementation contributes, by name."""
    from mycode_core.runtime.setup import collect_tools as collect

    problems: list[str] = []
    collect(pm, context, problems.append)
    if problems:
        raise RuntimeError("; ".join(problems))
    return {tool.name: tool for tool in context.tools.all()}


def call_tool(tool: Tool, arguments: dict[str, Any], context: RunContext) -> ToolResult:
    """Call ``tool`` as the core does: schema-check the arguments, then run the handler.

    A schema violation or an exception comes back as an error :class:`ToolResult`.
    """
    from mycode_core.runtime.tools import SchemaChecker

    problem = SchemaChecker().problem(tool, arguments)
    if problem is not None:
        return ToolResult.error(f"Invalid arguments for {tool.name}: {problem}")
    try:
        result = tool.handler(arguments, context)
    except Exception as exc:  # noqa: BLE001 - reported like the core does
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")
    if isinstance(result, ToolResult):
        return result
    return ToolResult(content="(no output)" if result is None else str(result))


# --------------------------------------------------------------------------- plugin dists


def write_plugin_dist(
    site_dir: Path,
    name: str,
    source: str,
    *,
    module: str | None = None,
    version: str = "0.0.1",
    distribution: str | None = None,
) -> Path:
    """Make an installed-looking plugin in ``site_dir``: a module plus a ``.dist-info`` whose
    ``entry_points.txt`` registers ``name`` in group ``mycode``. Put ``site_dir`` on
    ``PYTHONPATH`` and mycode finds it like any installed plugin. Returns the module file.
    """
    module = module or f"mycode_test_{name}"
    distribution = distribution or f"mycode-test-{name}".replace("_", "-")
    site_dir.mkdir(parents=True, exist_ok=True)
    module_file = site_dir / f"{module}.py"
    module_file.write_text(source, encoding="utf-8")
    info = site_dir / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[mycode]\n{name} = {module}\n", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return module_file
