"""Errors that say what to fix, and fast: refused connections, bad keys, no tools, piped input."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import FakeOpenAIServer, http_error, run_cli, turn, write_script


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_local_server_is_named_and_not_retried(cli: Any) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    run = cli(["-p", "task", "--model", "m", "--base-url", url, "--output-format", "stream-json"])
    assert run.rc == 1
    assert not [e for e in run.events if e["type"] == "retry"]
    result = run.events[-1]
    assert result["stop_reason"] == "model_error"
    assert url in result["error"] and "connection refused" in result["error"]


@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_key_hints_at_the_key_options(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], status: int
) -> None:
    server.enqueue(http_error(status, "Incorrect API key provided", error_type="auth"))
    run = cli(["-p", "task", *server_args])
    assert run.rc == 1
    error = run.events[-1]["error"]
    assert f"HTTP {status}" in error
    assert "--api-key" in error and "MYCODE_API_KEY" in error and "OPENAI_API_KEY" in error
    assert len(server.chat_requests) == 1  # not retried


def test_piped_input_is_appended_to_the_prompt(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    server.enqueue(turn("because"))
    run = cli(["-p", "why?", *server_args], input="ERROR: disk full\n")
    assert run.rc == 0
    assert server.chat_requests[0].messages[1]["content"] == "why?\n\nERROR: disk full"


def test_no_tools_loaded_is_a_configuration_error(
    cli: Any, workspace: Path, home: Path, tmp_path: Path
) -> None:
    model = write_script(tmp_path / "turns.json", [{"content": "I can only talk"}])
    from importlib import metadata  # every installed plugin disabled by name

    names = ",".join(ep.name for ep in metadata.entry_points(group="mycode"))
    run = run_cli(
        ["-p", "task", "--model", model],
        workspace,
        home,
        {"MYCODE_LOAD_PLUGINS": None, "MYCODE_DISABLE_PLUGINS": names or "none"},
    )
    assert run.rc == 2
    assert run.stderr.startswith("mycode: error: no tools are loaded")
    assert "Traceback" not in run.stderr
    chosen = cli(["-p", "task", "--model", model], env={"MYCODE_LOAD_PLUGINS": ""})
    assert chosen.rc == 0  # no plugins chosen on purpose: a tool-less run is allowed


def test_doctor_says_what_is_sent_to_the_model(workspace: Path, home: Path) -> None:
    """Whether images go to the model, and the request parameters configured for it."""
    pytest.importorskip("mycode_builtin_tools")  # its command
    import json

    with (home / "config.toml").open("a", encoding="utf-8") as config:
        config.write('[models."openai/gpt-4o"]\nrequest = { temperature = 0.1 }\n')
    args = ["doctor", "--model", "openai/gpt-4o", "--base-url", "http://127.0.0.1:9/v1"]
    env = {"MYCODE_LOAD_PLUGINS": "builtin_tools"}
    report = json.loads(run_cli(args, workspace, home, env).stdout)
    assert report["model"]["images"] is True
    assert report["model"]["request"] == {"temperature": 0.1}


def test_doctor_checks_model_server_key_and_home(
    workspace: Path, home: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    pytest.importorskip("mycode_builtin_tools")
    import json

    env = {"MYCODE_LOAD_PLUGINS": "builtin_tools", "MYCODE_MODEL": server.model}
    # the same report on a machine with bubblewrap or without (its absence is a problem)
    with (home / "config.toml").open("a", encoding="utf-8") as config:
        config.write('sandbox = "off"\n')
    good = run_cli(["doctor"], workspace, home, {**env, "MYCODE_BASE_URL": server.base_url})
    report = json.loads(good.stdout)
    assert good.rc == 0, good.stdout  # SPEC §2: 0 exactly when there is no problem
    assert report["model"]["name"] == server.model
    assert report["model"]["images"] is False and report["model"]["request"] == {}
    assert report["base_url"]["reachable"] is True
    assert report["api_key"] == {"present": False, "source": None}
    assert report["home_folder"]["writable"] is True
    assert report["problems"] == []
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    bad_home = tmp_path / "a-file"
    bad_home.write_text("x")
    bad = run_cli(
        ["doctor"],
        workspace,
        home,
        {**env, "MYCODE_BASE_URL": url, "MYCODE_HOME": str(bad_home), "OPENAI_API_KEY": "sk-x"},
    )
    report = json.loads(bad.stdout)
    assert report["base_url"]["reachable"] is False
    assert report["api_key"] == {"present": True, "source": "OPENAI_API_KEY"}
    assert "sk-x" not in bad.stdout  # never the key itself
    flag = run_cli(
        ["doctor", "--api-key", "sekret"], workspace, home, {**env, "OPENAI_API_KEY": "x"}
    )
    assert json.loads(flag.stdout)["api_key"] == {"present": True, "source": "flag"}
    assert "sekret" not in flag.stdout
    assert any(url in problem for problem in report["problems"])
    assert any(str(bad_home) in problem for problem in report["problems"])


def test_doctor_names_a_chat_template_that_drops_the_tools(workspace: Path, home: Path) -> None:
    """A ``llama-server`` whose ``/props`` says ``chat_template_caps.supports_tools: false``
    (``--chat-template chatml``) is a problem: the tools mycode offers are dropped."""
    pytest.importorskip("mycode_builtin_tools")
    import json

    llama = {"owned_by": "llamacpp", "meta": {"n_ctx_train": 8192}}
    props = {"chat_template_caps": {"supports_tools": False}}
    with FakeOpenAIServer(props=props, model_metadata=llama) as server:
        env = {"MYCODE_LOAD_PLUGINS": "builtin_tools", "MYCODE_BASE_URL": server.base_url}
        with (home / "config.toml").open("a", encoding="utf-8") as config:
            config.write('sandbox = "off"\n')
        done = run_cli(["doctor", "--model", "m"], workspace, home, env)
    problems = json.loads(done.stdout)["problems"]
    assert done.rc == 1 and any("chat template takes no tools" in p for p in problems), problems
