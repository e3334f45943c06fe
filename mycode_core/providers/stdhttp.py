"""A keep-alive HTTP/1.1 connection on ``http.client`` (``httpx2`` is slow to import): one timeout
for every blocking step, a closed reused connection opened again once, a request cut by close."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def proxy_configured() -> bool:
    """Whether the environment names a proxy (any case)."""
    return any(os.environ.get(name) or os.environ.get(name.upper()) for name in PROXY_VARIABLES)


class Response:
    """The parts of an HTTP response the provider reads."""

    def __init__(self, raw: Any, on_close: Any) -> None:
        self._raw = raw
        self._on_close = on_close
        self.status_code: int = raw.status
        # lower-cased: the provider looks them up that way, as in httpx2's headers
        self.headers = {name.lower(): value for name, value in raw.getheaders()}
        self._content: bytes | None = None

    def read(self) -> bytes:
        """The whole body."""
        if self._content is None:
            self._content = self._raw.read()
        return self._content

    def iter_lines(self) -> Any:
        """The body's lines as text, without line ends, as they arrive."""
        for line in iter(self._raw.readline, b""):
            yield line.decode("utf-8", "replace").rstrip("\r\n")

    def close(self) -> None:
        """Release the connection (for reuse when the body was read to the end)."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close(self._raw)


class Connection:
    """Requests to one server over one reused connection (one request at a time)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self._conn: Any = None
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        import http.client

        if self.https:
            import ssl

            context = ssl.create_default_context()
            with contextlib.suppress(ImportError, OSError):
                import certifi  # the CA bundle httpx would use, when installed

                context.load_verify_locations(certifi.where())
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=context
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """Send one POST; the response with its headers read (the body unread)."""
        import http.client

        for attempt in (0, 1):
            with self._lock:
                conn, reused = self._conn, self._conn is not None
                if conn is None:
                    conn = self._conn = self._connect()
            try:
                conn.request("POST", self.prefix + path, body=body, headers=headers)
                raw = conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._drop(conn)
                if reused and attempt == 0:
                    continue  # the server closed the idle connection: once more, anew
                raise
            except BaseException:
                self._drop(conn)
                raise
            return Response(raw, lambda raw, conn=conn: self._release(conn, raw))
        raise AssertionError("unreachable")

    def _release(self, conn: Any, raw: Any) -> None:
        if raw.will_close or not raw.isclosed():
            self._drop(conn)  # not read to the end, or the server closes it: never reuse

    def _drop(self, conn: Any) -> None:
        with self._lock:
            if self._conn is conn:
                self._conn = None
        sock = getattr(conn, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        conn.close()

    def close(self) -> None:
        """Close the connection; a request in flight on it fails at once."""
        if (conn := self._conn) is not None:
            self._drop(conn)
