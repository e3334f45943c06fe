"""Claude Code's ``{"type": "http"}`` hooks against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cc_helpers import Env, bash, notices


class _Hooks(BaseHTTPRequestHandler):
    """Answers each POST with what ``self.server.answers[path]`` says (status, JSON)."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: Any = self.server
        server.seen.append((self.path, dict(self.headers), body))
        status, answer = server.answers.get(self.path, (200, {}))
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook_server() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    server.seen, server.answers = [], {}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_an_http_hook_gets_the_input_and_its_answer_decides(env: Env, hook_server: Any) -> None:
    base = f"http://127.0.0.1:{hook_server.server_port}"
    hook_server.answers["/deny"] = (200, {"decision": "block", "reason": "not on my watch"})
    hook_server.answers["/broken"] = (500, {"error": "down"})
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "http", "url": f"{base}/deny", "allowedEnvVars": ["HOOK_TOKEN"],
                 "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "$SECRET_KEY"}},
                {"type": "http", "url": f"{base}/broken"},
            ]},
        ]
    }  # fmt: skip
    (env.home / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    result = env.run(
        [bash("echo hi"), {"content": "done"}],
        env={"HOOK_TOKEN": "t0ken", "SECRET_KEY": "do-not-send"},
    )
    assert result.rc == 0, result.stderr
    (denied,) = result.of_type("tool_result")
    assert denied["is_error"] and "not on my watch" in str(denied["content"])
    paths = {path: (headers, body) for path, headers, body in hook_server.seen}
    headers, body = paths["/deny"]
    assert body["hook_event_name"] == "PreToolUse" and body["tool_name"] == "Bash"
    assert body["tool_input"]["command"] == "echo hi"
    assert headers["Authorization"] == "Bearer t0ken"  # listed in allowedEnvVars
    assert "do-not-send" not in json.dumps(headers)  # not listed: nothing
    assert any("HTTP 500" in n for n in notices(result))  # a failing hook: non-blocking, said


def test_an_http_hook_without_a_url_is_one_notice(env: Env) -> None:
    hooks = {"Stop": [{"hooks": [{"type": "http", "url": "ftp://x"}]}]}
    (env.home / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    result = env.run([{"content": "done"}])
    assert result.rc == 0
    assert any("http hook has no http(s) 'url'" in n for n in notices(result))
