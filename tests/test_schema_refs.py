"""A tool's input schema with a ``$ref`` that does not resolve in the schema itself, as MCP
servers write them: the arguments are checked without fetching it, and the run goes on."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mycode_core.records import Tool
from mycode_core.testing import make_runner, run_events, tools_plugin


@pytest.fixture
def schema_url() -> Iterator[tuple[str, list[str]]]:
    """A URL serving ``{"type": "integer"}`` on 127.0.0.1, and the paths asked of it."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            asked.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/schema.json", asked
    server.shutdown()
    server.server_close()


def test_unresolved_refs_are_never_fetched_and_never_end_the_run(
    tmp_path: Path, schema_url: tuple[str, list[str]]
) -> None:
    url, asked = schema_url

    def handler(arguments: dict[str, Any], context: Any) -> str:
        return f"got {sorted(arguments)}"

    tool = Tool(
        name="shaped",
        description="A tool whose schema refers elsewhere.",
        handler=handler,
        input_schema={
            "type": "object",
            "properties": {
                "remote": {"$ref": url},
                "dangling": {"$ref": "#/$defs/missing"},
                "meta": {"$ref": "http://json-schema.org/draft-07/schema#"},
                "n": {"type": "integer"},
            },
        },
    )
    turns = [
        {"tool_calls": [{"name": "shaped", "arguments": arguments}]}
        for arguments in ({"remote": "text"}, {"dangling": 1}, {"meta": {}}, {"n": "x"})
    ]
    runner = make_runner(tmp_path, tools_plugin(tool), turns=[*turns, {"content": "done"}])
    events = run_events(runner)
    results = [(e.is_error, str(e.content)) for e in events if e.type == "tool_result"]
    assert results[:3] == [(False, "got ['remote']"), (False, "got ['dangling']"),
                           (False, "got ['meta']")]  # fmt: skip
    assert results[3][0] and "integer" in results[3][1]  # what resolves is still checked
    assert events[-1].type == "result" and events[-1].stop_reason == "completed"
    assert asked == []
