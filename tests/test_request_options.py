"""``[models."NAME"] request``: parameters sent with every chat-completions request of that
model (temperature, ``reasoning_effort``, a server's own fields such as llama.cpp's
``chat_template_kwargs``), checked on what the fake server receives; an untrusted workspace's
own config cannot add them (SPEC §8: it never chooses what is sent to the model server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_core.testing import FakeOpenAIServer, turn

OPTIONS = (
    '[models."m"]\nrequest = { temperature = 0.2, reasoning_effort = "high", '
    "chat_template_kwargs = { enable_thinking = false } }\n"
)


def _add(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n" + text)


def test_request_options_reach_the_server(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _add(home / "config.toml", OPTIONS)
    server.enqueue(turn("done"), turn("again"))
    run = cli(["-p", "go", *server_args, "--max-steps", "1"])
    assert run.rc == 0, run.stderr
    body = server.chat_requests[0].body
    assert body["temperature"] == 0.2 and body["reasoning_effort"] == "high"
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["model"] == "m" and body["stream"] is True


def test_another_model_gets_none_of_them(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _add(home / "config.toml", OPTIONS.replace('"m"', '"other"'))
    server.enqueue(turn("done"))
    assert cli(["-p", "go", *server_args]).rc == 0
    assert "temperature" not in server.chat_requests[0].body


def test_what_mycode_sends_itself_is_a_config_error(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _add(home / "config.toml", '[models."m"]\nrequest = { messages = [], temperature = 1 }\n')
    run = cli(["-p", "go", *server_args])
    assert run.rc == 2 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "request" in lines[0] and "messages" in lines[0]
    assert not server.chat_requests


def test_an_untrusted_workspace_cannot_add_request_options(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path
) -> None:
    _add(workspace / ".mycode" / "config.toml", OPTIONS.replace("temperature", "store = true, t"))
    server.enqueue(turn("done"), turn("done"))
    run = cli(["-p", "go", *server_args])
    assert run.rc == 0, run.stderr
    assert "store" not in server.chat_requests[0].body
    notices = [e["message"] for e in run.of_type("notice") if "request" in e["message"]]
    assert len(notices) == 1 and '[models."m"] request' in notices[0]
    trusted = cli(["-p", "go", *server_args, "--trust"])
    assert trusted.rc == 0 and server.chat_requests[1].body["store"] is True
