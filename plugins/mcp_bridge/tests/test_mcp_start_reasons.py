"""Why a server did not start, in one readable line naming the real cause."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import PYTHON, feature, serve_folder


@pytest.fixture
def not_found_url(tmp_path: Path) -> Iterator[str]:
    """A web server on 127.0.0.1 answering 404 to everything (not an MCP server)."""
    with serve_folder(tmp_path) as base:
        yield f"{base}/no/such/sse"


def test_a_missing_working_directory_is_named_as_such(make_run: Any, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    run = make_run({"feat": feature(cwd=str(gone))})
    (notice,) = run.notices()
    assert f"working directory not found: '{gone}'" in notice
    assert "command not found" not in notice


def test_what_a_server_printed_on_stdout_is_quoted_readably(make_run: Any) -> None:
    script = "print('usage: talk to me in English'); raise SystemExit(3)"
    run = make_run({"chatty": {"command": PYTHON, "args": ["-c", script]}})
    (notice,) = run.notices()
    assert "exited before completing the MCP handshake" in notice
    assert "not JSON-RPC" in notice and "'usage: talk to me in English'" in notice
    assert "validation error" not in notice and "pydantic" not in notice


def test_an_http_error_is_one_line(make_run: Any, not_found_url: str) -> None:
    run = make_run({"web": {"type": "sse", "url": not_found_url, "startup_timeout": 20}})
    (notice,) = run.notices()
    assert "MCP server 'web' failed to start" in notice and "404" in notice
    assert "\n" not in notice, notice


def test_a_server_that_cannot_be_reached_says_why(make_run: Any) -> None:
    """Refused, or a host that does not resolve: the URL and the system's reason, not the HTTP
    client's "All connection attempts failed"."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    refused = f"http://127.0.0.1:{port}/mcp"
    servers = {"down": {"type": "http", "url": refused}}
    servers["nowhere"] = {"type": "http", "url": "https://mcp.example.invalid/mcp"}
    notices = make_run(servers).notices()
    assert any(
        f"'down' failed to start: cannot connect to {refused}: connection refused" in n
        for n in notices
    ), notices
    assert any(
        "'nowhere' failed to start: cannot connect to https://mcp.example.invalid/mcp: "
        "host not found" in n
        for n in notices
    ), notices
