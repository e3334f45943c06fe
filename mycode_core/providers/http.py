"""One POST of a prepared body, on :mod:`.stdhttp` or (with a proxy configured) ``httpx2``;
failures come back as the ``openai`` SDK's did: a timeout, a connection or a status error."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from mycode_core import __version__


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


ERROR_TEXT_CHARS = 500  # of an error body that is not an OpenAI error object


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


def _raise_for_status(response: Any) -> None:
    """A status of 400 or more raises :class:`StatusFailure` with the body (response closed)."""
    if response.status_code < 400:
        return
    try:
        text = response.read().decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - a body that cannot be read is no body
        text = ""
    finally:
        response.close()
    body: Any = text
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    raise StatusFailure(response.status_code, body, response.headers)


class ChatClient:
    """Requests to one OpenAI-compatible server."""

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        from mycode_core.providers.stdhttp import Connection, proxy_configured

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
        if proxy_configured():
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
        """POST ``body``: the response (when ``stream``, unread and for the caller to close)."""
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
        _raise_for_status(response)
        if not stream:
            response.close()
        return response

    def close(self) -> None:
        """Close every connection (a request in flight fails at once)."""
        if self._std is not None:
            self._std.close()
        if self._client is not None:
            self._client.close()
