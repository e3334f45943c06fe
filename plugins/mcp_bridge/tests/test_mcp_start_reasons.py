"""Why a server did not start, in one readable line naming the real cause."""

from __future__ import annotations

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
