"""Window discovery off the first request's path (issue 24): a per-server cache under
MYCODE_HOME, probes only after the first reply, bad /models answers cost nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mycode_core.providers.discovery import (
    Limits,
    cached_window,
    claimed_window,
    remember_window,
)
from mycode_core.testing import FakeOpenAIServer, make_runner, run_cli, run_events, turn


def test_the_cache_keeps_one_window_per_server_and_model(tmp_path: Path) -> None:
    assert cached_window(tmp_path, "http://a/v1", "m").window is None
    remember_window(tmp_path, "http://a/v1/", "m", 32_000)
    remember_window(tmp_path, "http://a/v1", "other", 8_000)
    assert cached_window(tmp_path, "http://a/v1", "m").window == 32_000
    assert cached_window(tmp_path, "http://a/v1", "other").window == 8_000
    assert cached_window(tmp_path, "http://b/v1", "m").window is None
    remember_window(tmp_path, "http://a/v1", "m", None)
    assert cached_window(tmp_path, "http://a/v1", "m").window is None
    (tmp_path / "cache" / "windows.json").write_text("not json")
    assert cached_window(tmp_path, "http://a/v1", "other").window is None  # garbage: unknown


def test_a_learned_window_is_cached_with_the_claim_it_beat(tmp_path: Path) -> None:
    remember_window(tmp_path, "http://a/v1", "m", Limits(3_000, 500), claimed=200_000)
    assert cached_window(tmp_path, "http://a/v1", "m") == (3_000, 500)
    assert claimed_window(tmp_path, "http://a/v1", "m") == 200_000
    remember_window(tmp_path, "http://a/v1", "m", 400_000)  # the metadata changed
    assert cached_window(tmp_path, "http://a/v1", "m") == (400_000, None)
    assert claimed_window(tmp_path, "http://a/v1", "m") is None


def test_probes_come_after_the_first_request_and_fill_the_cache(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    with FakeOpenAIServer(model="m", model_metadata={"max_model_len": 12_288}) as server:
        server.enqueue(turn("done"))
        runner = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
        runner.home = home
        events = run_events(runner, "hi", close=False)
        assert events[-1].type == "result"
        assert runner.view is not None
        runner.view.window.requested.wait(5)
        deadline = threading.Event()
        for _ in range(100):
            if cached_window(home, server.base_url, "m").window:
                break
            deadline.wait(0.05)
        runner.close()
        kinds = [r.method for r in server.requests]
        assert kinds.index("POST") < kinds.index("GET")  # no probe before the chat request
        assert cached_window(home, server.base_url, "m").window == 12_288


def test_a_cached_window_is_used_from_the_first_request(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    with FakeOpenAIServer(model="m") as server:
        remember_window(home, server.base_url, "m", 50_000)
        server.enqueue(turn("done"))
        runner = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
        runner.home = home
        run_events(runner, "hi", close=False)
        assert runner.view is not None
        assert (runner.view.window.limit, runner.view.window.source) == (50_000, "server")
        runner.close()


def test_a_wrong_cached_window_is_learned_again(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    with FakeOpenAIServer(model="m", context_window=3_000) as server:
        remember_window(home, server.base_url, "m", 200_000)  # the server shrank since
        big = "word " * 500  # fits 3,000 tokens, not with the reply cap of a 200,000 window
        server.enqueue(turn("done"), turn("done"))
        runner = make_runner(
            tmp_path,
            model="m",
            base_url=server.base_url,
            api_key="k",
            retry_base_delay=0.001,
            retry_max_delay=0.01,
        )
        runner.home = home
        events = run_events(runner, f"summarise {big}", close=False)
        assert runner.view is not None
        window = runner.view.window
        runner.close()
        assert server.overflows >= 1
        assert (window.limit, window.source) == (3_000, "learned")
        assert events[-1].stop_reason == "completed"
        assert cached_window(home, server.base_url, "m").window == 3_000  # the cache too
        overflows = server.overflows
        again = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
        again.home = home
        events = run_events(again, f"summarise {big}")
        # the next run starts from the learned window: its first request already fits
        assert server.overflows == overflows
        assert events[-1].stop_reason == "completed"


def test_a_learned_window_beats_the_bigger_one_the_server_reports(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    meta = {"max_model_len": 200_000}  # the metadata says more than the server accepts
    with FakeOpenAIServer(model="m", context_window=3_000, model_metadata=meta) as server:
        server.enqueue(turn("done"), turn("done"))
        runner = make_runner(
            tmp_path, model="m", base_url=server.base_url, api_key="k", retry_max_delay=0.01
        )
        runner.home = home
        events = run_events(runner, "summarise " + "word " * 500, close=False)
        assert events[-1].stop_reason == "completed"
        _join_discovery()
        runner.close()
        assert "GET" in [r.method for r in server.requests]
        assert cached_window(home, server.base_url, "m").window == 3_000
        # the next run keeps it while the metadata claims the same 200,000: no new rejection
        overflows, gets = server.overflows, len(server.requests)
        again = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
        again.home = home
        events = run_events(again, "summarise " + "word " * 500, close=False)
        _join_discovery()
        assert again.view is not None
        assert (again.view.window.limit, events[-1].stop_reason) == (3_000, "completed")
        again.close()
        assert "GET" in [r.method for r in server.requests[gets:]]  # it did ask again
        assert server.overflows == overflows
        assert cached_window(home, server.base_url, "m").window == 3_000
        server.model_metadata["max_model_len"] = 400_000  # a new claim is believed
        third = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
        third.home = home
        run_events(third, "hi", close=False)
        _join_discovery()
        third.close()
        assert cached_window(home, server.base_url, "m").window == 400_000


def _join_discovery() -> None:
    """Wait for the background window refresh to have asked and written."""
    for thread in threading.enumerate():
        if thread.name == "mycode-window-discovery":
            thread.join(10)


class _BadModels(BaseHTTPRequestHandler):
    """A probe (``/models``, ``/props``, ``/api/show``) hangs until released (``hang``),
    answers garbage (``garbage``) or a real answer after 10 s (``slow``); every request is
    logged in order. Chat: a tool call first (the probes start after the first reply), then
    a final answer."""

    mode = "hang"
    release = threading.Event()
    log: list[str] = []
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Quiet."""

    def _send(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """A probe: hang, send garbage, or answer late."""
        self.log.append("GET start")
        if self.mode == "hang":
            self.release.wait(60)
        elif self.mode == "slow":
            self.release.wait(10)
        body = b"\x00garbage{" if self.mode == "garbage" else b'{"data":[{"id":"m",'
        body += b'"max_model_len":4096}]}' if self.mode == "slow" else b""
        self.log.append("GET end")
        self._send("application/json", body)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """A ``glob`` call, then the final answer ``ok``, streamed (Ollama's ``/api/show``
        is a probe like the ``GET`` ones)."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.endswith("/chat/completions"):
            self.do_GET()
            return
        first = not any(entry.startswith("POST") for entry in self.log)
        self.log.append("POST")
        call = {"index": 0, "id": "c1", "type": "function",
                "function": {"name": "glob", "arguments": '{"pattern": "*.txt"}'}}  # fmt: skip
        delta = {"tool_calls": [call]} if first else {"content": "ok"}
        finish = "tool_calls" if first else "stop"
        chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self._send("text/event-stream", f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture(params=["hang", "garbage", "slow"])
def bad_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, list[str]]]:
    log: list[str] = []
    handler = type(
        "Handler", (_BadModels,), {"mode": request.param, "release": threading.Event(), "log": log}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", request.param, log
    handler.release.set()
    server.shutdown()


def test_a_bad_models_endpoint_never_holds_the_run(
    tmp_path: Path, bad_server: tuple[str, str, list[str]]
) -> None:
    base_url, mode, log = bad_server
    home = tmp_path / "home"
    result = run_cli(
        ["-p", "hi", "--model", "m", "--base-url", base_url, "--api-key", "x"],
        tmp_path,
        home,
        use_script=True,
    )
    seen = list(log)  # what the server saw by the time the run had exited
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert "Traceback" not in result.stderr
    assert seen.count("POST") == 2
    assert seen[0] == "POST"  # no probe before the first chat request
    if mode != "garbage":  # still unanswered when the run ended: the run never waited
        assert "GET end" not in seen, seen
    assert cached_window(home, base_url, "m").window is None  # nothing learned from garbage


def test_the_servers_reply_cap_is_cached_and_sent_as_max_tokens(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    meta = {"max_model_len": 32_768, "max_completion_tokens": 3_000}
    with FakeOpenAIServer(model="m", model_metadata=meta) as server:
        server.enqueue(turn("one"), turn("two"))
        for prompt in ("first", "second"):
            runner = make_runner(tmp_path, model="m", base_url=server.base_url, api_key="k")
            runner.home = home
            run_events(runner, prompt, close=False)
            assert runner.view is not None
            runner.view.window.requested.wait(5)
            for _ in range(100):
                if cached_window(home, server.base_url, "m").output:
                    break
                threading.Event().wait(0.05)
            runner.close()
        caps = [r.body.get("max_tokens") for r in server.chat_requests]
        url = server.base_url
    # the first run's request: a quarter of the default window; the second run knows the
    # server's window and cap from the cache before its first request
    assert caps == [16_384, 3_000]
    assert cached_window(home, url, "m") == (32_768, 3_000)
    remember_window(home, url, "m", 32_768)  # a later answer without a cap
    assert cached_window(home, url, "m") == (32_768, None)


def test_a_run_shorter_than_the_probe_still_learns_the_window(tmp_path: Path) -> None:
    """A one-reply ``-p`` run ends before the probe that follows its first reply comes
    back; the end of the turn lets a probe under way finish, so the result names the
    server's window and the next run has it from the start."""
    home = tmp_path / "home"
    with FakeOpenAIServer(model="m", model_metadata={"max_model_len": 12_288}) as server:
        server.enqueue(turn("done"))
        args = ["-p", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", "k"]
        run = run_cli([*args, "--output-format", "json"], tmp_path, home)
        url = server.base_url
    assert run.rc == 0, run.stderr
    assert json.loads(run.stdout)["context"]["window"] == 12_288
    assert cached_window(home, url, "m").window == 12_288
