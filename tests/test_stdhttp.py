"""The provider's standard-library connection (issue 24): keep-alive reuse, a connection the
server dropped opened again, errors as the provider classifies them, httpx2 behind a proxy."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mycode_core.providers.stdhttp import ChatClient, ConnectFailure, Connection, StatusFailure


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    peers: list[Any] = []
    handlers: list[Any] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Quiet."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """Echo the body; ``/fail`` answers 429 with a JSON error."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.peers.append(self.client_address)
        self.handlers.append(self)
        status = 429 if self.path.endswith("/fail") else 200
        if status != 200:
            body = b'{"error": {"message": "slow down"}}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "7")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[tuple[str, type[_KeepAlive]]]:
    handler = type("Handler", (_KeepAlive,), {"peers": [], "handlers": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler
    httpd.shutdown()


def test_requests_reuse_one_connection_and_survive_a_dropped_one(
    server: tuple[str, type[_KeepAlive]],
) -> None:
    url, handler = server
    connection = Connection(url, timeout=10)
    for body in (b"one", b"two"):
        response = connection.post("/x", body, {"Content-Type": "application/json"})
        assert response.read() == body
        response.close()
    assert handler.peers[0] == handler.peers[1]  # kept alive
    handler.handlers[-1].connection.shutdown(socket.SHUT_RDWR)  # the server drops it
    response = connection.post("/x", b"three", {})
    assert response.read() == b"three"
    response.close()
    assert handler.peers[2] != handler.peers[1]
    connection.close()


def test_status_errors_carry_message_and_headers(server: tuple[str, type[_KeepAlive]]) -> None:
    url, _ = server
    client = ChatClient(url, "k", 10)
    with pytest.raises(StatusFailure) as caught:
        client.post("/fail", b"{}", stream=True)
    assert caught.value.status_code == 429
    assert caught.value.message == "slow down"
    assert caught.value.headers.get("retry-after") == "7"
    client.close()


def test_a_refused_connection_keeps_its_cause() -> None:
    client = ChatClient("http://127.0.0.1:9/v1", "k", 5)
    with pytest.raises(ConnectFailure) as caught:
        client.post("/chat/completions", b"{}", stream=True)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


def test_not_an_http_url_is_a_connection_error() -> None:
    with pytest.raises(ConnectFailure):
        ChatClient("localhost:8000", "k", 5)


def test_a_proxy_in_the_environment_means_httpx2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = ChatClient("https://example.invalid/v1", "k", 5)
    assert client._std is None and client._client is not None
    client.close()
