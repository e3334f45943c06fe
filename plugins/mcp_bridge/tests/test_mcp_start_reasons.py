"""Why a server did not start, in one readable line naming the real cause."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp_helpers import PYTHON, SilentHandler, feature, http_test_server, serve_folder, serve_http


@pytest.fixture
def not_found_url(tmp_path: Path) -> Iterator[str]:
    """A web server on 127.0.0.1 answering 404 to everything (not an MCP server)."""
    with serve_folder(tmp_path) as base:
        yield f"{base}/no/such/sse"


class _Refusing(SilentHandler):
    """Answers 401 to every request, as a server wanting a token does."""

    def do_POST(self) -> None:
        self.send_response(401)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        self.wfile.write(b"no token")

    do_GET = do_POST


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A web server on 127.0.0.1 answering 401 Unauthorized to everything."""
    with serve_http(_Refusing) as base:
        yield f"{base}/mcp"


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


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_an_http_refusal_names_its_status_and_what_to_check(
    make_run: Any, refusing_url: str, transport: str
) -> None:
    """A 401 read "MCP error -32603: Server returned an error response" (streamable HTTP):
    the SDK hides the status."""
    run = make_run({"web": {"type": transport, "url": refusing_url}})
    (notice,) = run.notices()
    assert (
        "'web' failed to start: HTTP 401 Unauthorized: check the entry's headers / token"
    ) in notice, notice
    assert "-32603" not in notice


def test_a_wrong_path_on_an_mcp_server_is_a_404_for_that_url(make_run: Any) -> None:
    """It read "MCP error -32601: Not Found", as if a method were missing."""
    with http_test_server() as port:
        url = f"http://127.0.0.1:{port}/nope"
        (notice,) = make_run({"web": {"type": "http", "url": url}}).notices()
    assert f"'web' failed to start: HTTP 404 Not Found for {url}: check the URL" in notice
    assert "-32601" not in notice


def test_a_header_whose_variable_is_not_set_says_so(
    make_run: Any, refusing_url: str, workspace: Path, home: Path
) -> None:
    """``"Bearer ${TOKEN}"`` with no TOKEN read "LocalProtocolError: Illegal header value
    b'Bearer '"; a header left empty was not mentioned beside the 401 it earned."""
    with http_test_server() as port:
        servers = {
            "bad": {
                "type": "http",
                "url": f"http://127.0.0.1:{port}/mcp",
                "headers": {"Authorization": "Bearer ${MYCODE_TEST_UNSET_TOKEN}"},
            },
            "empty": {
                "type": "http",
                "url": refusing_url,
                "headers": {"X-Key": "${MYCODE_TEST_UNSET_KEY}"},
            },
        }
        notices = make_run(servers).notices()
        (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        from mycode_mcp_bridge.cli import mcp_cli

        listed = CliRunner().invoke(mcp_cli, ["list", "--cwd", str(workspace)]).stdout
    unset = "header 'Authorization' uses ${MYCODE_TEST_UNSET_TOKEN}, which is not set"
    invalid = f"{unset}: the header's value is not valid without it"
    assert any(f"'bad' failed to start: {invalid}" in n for n in notices), notices
    assert not [n for n in notices if "LocalProtocolError" in n], notices
    assert f"failed: {invalid}" in listed, listed
    assert any(
        "'empty' failed to start: HTTP 401 Unauthorized: check the entry's headers / token; "
        "header 'X-Key' uses ${MYCODE_TEST_UNSET_KEY}, which is not set" in n
        for n in notices
    ), notices


def test_a_whole_command_line_as_the_command_says_to_split_it(make_run: Any) -> None:
    """``"command": "python server.py"`` is run as one program of that name: "command not
    found" alone pointed nowhere, while the program it starts with exists."""
    run = make_run({"joined": {"command": f"{PYTHON} -m some_server --port 1"}})
    (notice,) = run.notices()
    assert f"command not found: '{PYTHON} -m some_server --port 1'" in notice
    assert f"give '{PYTHON}' as 'command' and the rest in 'args'" in notice
    missing = make_run({"gone": {"command": "/nonexistent/mcp-gone --flag"}})
    (plain,) = missing.notices()
    assert "command not found: '/nonexistent/mcp-gone --flag'" in plain and "'args'" not in plain
