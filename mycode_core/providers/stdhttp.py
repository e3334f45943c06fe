"""One POST of a prepared body over a keep-alive ``http.client`` connection (``httpx2``, slow to
import, only behind a proxy); failures come back as a timeout, a connection or a status error."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from mycode_core import __version__

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
ERROR_TEXT_CHARS = 500  # of an error body that is not an OpenAI error object


class RequestTimedOut(Exception):
    """The request got no answer within the timeout."""


class ConnectFailure(Exception):
    """The request could not be sent or got no answer (the cause is chained)."""


class StatusFailure(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, body: Any, headers: Any) -> None:
        self.status_code = status
        self.body = body.get("error", body) if isinstance(body, dict) else body
        self.headers = headers
        self.message = _said(self.body)  # "": the body says nothing
        super().__init__(f"Error code: {status} - {self.message}")


def _said(body: Any) -> str:
    """What an error body says, on one line and cut short (of an HTML page: title or heading)."""
    told = map(body.get, ("message", "detail", "error")) if isinstance(body, dict) else [body]
    said = next((v for v in told if isinstance(v, str)), "")
    if said.lstrip().startswith("<"):
        import html
        import re

        found = re.search(r"<(title|h[1-6])\b[^>]*>(.*?)</\1>", said, re.I | re.S)
        page = found.group(2) if found else re.sub(r"(?is)<(style|script)\b.*?</\1>", "", said)
        said = html.unescape(re.sub(r"<[^>]*>", " ", page))
    return " ".join(said.split())[:ERROR_TEXT_CHARS]


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
    """Requests to one server over one reused connection (one request at a time): one timeout
    for every blocking step, a closed reused connection opened again once, a request cut by
    :meth:`close`."""

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


class ChatClient:
    """Requests to one OpenAI-compatible server."""

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"mycode/{__version__}",
        }
        self._std: Connection | None = None
        self._client: Any = None
        # what each client raises for a timeout, and for any other failure to get an answer
        self._failures: tuple[type[Exception], tuple[type[Exception], ...]]
        if any(os.environ.get(name) or os.environ.get(name.upper()) for name in PROXY_VARIABLES):
            import httpx2

            self._client = httpx2.Client(timeout=httpx2.Timeout(timeout), follow_redirects=True)
            self._failures = (httpx2.TimeoutException, (httpx2.HTTPError, OSError))
        else:
            import http.client

            try:
                self._std = Connection(self.base_url, timeout)
            except ValueError as exc:  # not an http(s) URL: a connection error, as before
                raise ConnectFailure(str(exc)) from exc
            self._failures = (TimeoutError, (OSError, http.client.HTTPException))

    def post(self, path: str, body: bytes, *, stream: bool) -> Any:
        """POST ``body``: the response (when ``stream``, unread and for the caller to close);
        a status of 400 or more raises :class:`StatusFailure` with the body (response closed)."""
        timed_out, failed = self._failures
        try:
            if self._std is None:
                request = self._client.build_request(
                    "POST", self.base_url + path, content=body, headers=self.headers
                )
                response = self._client.send(request, stream=stream)
            else:
                response = self._std.post(path, body, self.headers)
                if not stream or response.status_code >= 400:
                    response.read()
        except timed_out as exc:
            raise RequestTimedOut("Request timed out.") from exc
        except failed as exc:
            raise ConnectFailure("Connection error.") from exc
        if response.status_code >= 400:
            try:
                text = response.read().decode("utf-8", "replace").strip()
            except Exception:  # noqa: BLE001 - a body that cannot be read is no body
                text = ""
            finally:
                response.close()
            error: Any = text
            with contextlib.suppress(ValueError):
                error = json.loads(text)
            raise StatusFailure(response.status_code, error, response.headers)
        if not stream:
            response.close()
        return response

    def close(self) -> None:
        """Close every connection (a request in flight fails at once)."""
        if self._std is not None:
            self._std.close()
        if self._client is not None:
            self._client.close()
