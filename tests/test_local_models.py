"""Issue 20 item 5: with no model configured, the local servers that answer are offered (`-p`:
exit 2 naming them and the flags; doctor: ``local_servers``; interactive: a choice, remembered).
The probe's list comes from ``MYCODE_LOCAL_SERVERS`` here: real servers on 11434/8080/… would
not be portable."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mycode_core.cli import local_models
from mycode_core.testing import FakeOpenAIServer, cli_env, requires_plugin, run_cli, turn
from mycode_core.testing.terminal import Terminal

needs_doctor = requires_plugin("builtin_tools")  # doctor is builtin_tools'
GARBAGE = {
    "not json": b"<html>hello</html>",
    "a list": b"[1, 2, 3]",
    "no data": b'{"object": "list"}',
    "ids not strings": b'{"data": [{"id": 5}, {"name": "x"}]}',
}


class _Garbage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        body = GARBAGE[self.server.kind]  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(model="qwen2.5-coder:7b") as fake:
        yield fake


def _garbage_server(kind: str) -> tuple[ThreadingHTTPServer, str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    httpd.kind = kind  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_p_with_no_model_names_the_local_server_and_the_flags(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    probe = f"vLLM=http://127.0.0.1:{_closed_port()}/v1,Ollama={server.base_url}"
    done = run_cli(["-p", "hi"], tmp_path, tmp_path / "home", {local_models.PROBE_ENV: probe})
    assert done.rc == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert f"Ollama at {server.base_url} (qwen2.5-coder:7b)" in lines[0]
    assert f"--model qwen2.5-coder:7b --base-url {server.base_url}" in lines[0]
    assert server.chat_requests == []


def test_a_configured_model_never_probes(tmp_path: Path, server: FakeOpenAIServer) -> None:
    other = FakeOpenAIServer()
    with other:
        env = {local_models.PROBE_ENV: f"Ollama={other.base_url}"}
        server.enqueue(turn("done"))
        done = run_cli(["-p", "hi", *server.cli_args()], tmp_path, tmp_path / "home", env)
        assert done.rc == 0, done.stderr
        assert other.requests == []


@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_garbage_answers_are_not_offered(tmp_path: Path, kind: str) -> None:
    httpd, url = _garbage_server(kind)
    try:
        done = run_cli(
            ["-p", "hi"], tmp_path, tmp_path / "home", {local_models.PROBE_ENV: f"x={url}"}
        )
        assert done.rc == 2 and "Traceback" not in done.stderr
        assert "no model configured: pass --model" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        if kind != "not json":
            assert local_models.parse_models(json.loads(GARBAGE[kind])) is None
    finally:
        httpd.shutdown()


def test_nothing_listening_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = [_closed_port() for _ in range(4)]
    monkeypatch.setenv(local_models.PROBE_ENV, ",".join(f"http://127.0.0.1:{p}/v1" for p in ports))
    assert local_models.local_servers() == []
    monkeypatch.setenv(local_models.PROBE_ENV, "")
    assert local_models.candidates() == []
    monkeypatch.delenv(local_models.PROBE_ENV)
    assert [url for _n, url in local_models.candidates()] == [
        "http://127.0.0.1:11434/v1",
        "http://127.0.0.1:8080/v1",
        "http://127.0.0.1:1234/v1",
        "http://127.0.0.1:8000/v1",
    ]


def test_an_empty_server_is_named_without_a_model(tmp_path: Path) -> None:
    servers = [local_models.LocalServer("Ollama", "http://127.0.0.1:1/v1", [])]
    line = local_models.no_model_line(servers) or ""
    assert "serves no model yet" in line and "Ollama at http://127.0.0.1:1/v1" in line
    assert local_models.parse_models({"data": []}) == []


@needs_doctor
def test_doctor_lists_local_servers_and_exits_1_with_problems(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    env = {local_models.PROBE_ENV: f"Ollama={server.base_url}"}
    done = run_cli(["doctor", "--cwd", str(tmp_path)], tmp_path, tmp_path / "home", env)
    report = json.loads(done.stdout)
    assert report["local_servers"] == [
        {"name": "Ollama", "url": server.base_url, "models": ["qwen2.5-coder:7b"]}
    ]
    assert any("no model configured" in p for p in report["problems"])
    assert done.rc == 1


@needs_doctor
def test_doctor_reports_a_model_the_server_does_not_list(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    args = ["doctor", "--cwd", str(tmp_path)]
    env = {"MYCODE_MODEL": "llama3", "MYCODE_BASE_URL": server.base_url}
    done = run_cli(args, tmp_path, tmp_path / "home", env)
    report = json.loads(done.stdout)
    assert "local_servers" not in report
    missing = [p for p in report["problems"] if "does not list the model 'llama3'" in p]
    assert missing and "qwen2.5-coder:7b" in missing[0]
    assert done.rc == 1
    env["MYCODE_MODEL"] = "qwen2.5-coder:7b"
    done = run_cli(args, tmp_path, tmp_path / "home", env)
    report = json.loads(done.stdout)
    assert not any("does not list" in p for p in report["problems"])
    assert done.rc == (1 if report["problems"] else 0)


def test_remember_keeps_the_other_settings(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('base_url = "http://old/v1"\nmax_steps = 7\n\n[sandbox]\nnetwork = true\n')
    local_models.remember(tmp_path, "llama3.2", "http://127.0.0.1:11434/v1")
    data = tomllib.loads(config.read_text())
    assert data["model"] == "llama3.2" and data["base_url"] == "http://127.0.0.1:11434/v1"
    assert data["max_steps"] == 7 and data["sandbox"] == {"network": True}


REMEMBER = """
import resource, sys
from pathlib import Path
from mycode_core.cli import local_models
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))  # as if the disk filled up mid-write
local_models.remember(Path(sys.argv[1]), "llama3.2", "http://127.0.0.1:11434/v1")
"""


def test_remember_never_leaves_a_half_written_config(tmp_path: Path) -> None:
    """A write cut short (the disk full, a crash) must leave the user's config as it was, and
    a config that is a symlink (a dotfiles repository) is written through, not replaced."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    original = "max_steps = 7\n" + "".join(f"# note {n}: {'x' * 60}\n" for n in range(60))
    (dotfiles / "mycode.toml").write_text(original)
    (tmp_path / "config.toml").symlink_to(dotfiles / "mycode.toml")
    env = cli_env(tmp_path, {"PYTHONDONTWRITEBYTECODE": "1"})
    cut = subprocess.run([sys.executable, "-c", REMEMBER, str(tmp_path)], env=env, check=False,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert cut.returncode != 0  # the write failed (EFBIG)
    assert (dotfiles / "mycode.toml").read_text() == original
    local_models.remember(tmp_path, "llama3.2", "http://127.0.0.1:11434/v1")
    assert (tmp_path / "config.toml").is_symlink()
    data = tomllib.loads((dotfiles / "mycode.toml").read_text())
    assert data["model"] == "llama3.2" and data["max_steps"] == 7


def test_interactive_offers_the_choice_and_remembers_it(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    env = cli_env(home, {local_models.PROBE_ENV: f"Ollama={server.base_url}", "TERM": "xterm"})
    env.update(MYCODE_LOAD_PLUGINS="", NO_COLOR="1")
    argv = [sys.executable, "-m", "mycode_core", "--cwd", str(tmp_path), "--trust"]
    term = Terminal(argv, env, tmp_path)
    term.expect("Use which one")
    assert "1. qwen2.5-coder:7b  (Ollama" in term.plain
    term.type("1\r")
    term.expect("/help for help")
    server.enqueue(turn("hello from the local model"))
    term.type("hi\r")
    term.expect("hello from the local model")
    term.type("/exit\r")
    assert term.wait() == 0
    saved = tomllib.loads((home / "config.toml").read_text())
    assert saved["model"] == "qwen2.5-coder:7b" and saved["base_url"] == server.base_url
    term = Terminal(argv, env, tmp_path)  # remembered: no question the second time
    term.expect("/help for help")
    assert "Use which one" not in term.plain
    term.type("/exit\r")
    assert term.wait() == 0


def test_p_with_a_base_url_but_no_model_names_that_servers_models(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    """``--base-url`` alone (a llama.cpp server, say): its own models are named first."""
    done = run_cli(
        ["-p", "hi", "--base-url", server.base_url],
        tmp_path,
        tmp_path / "home",
        {local_models.PROBE_ENV: ""},
    )
    assert done.rc == 2, done.stderr
    line = done.stderr.strip()
    assert f"your server at {server.base_url} (qwen2.5-coder:7b)" in line
    assert f"--model qwen2.5-coder:7b --base-url {server.base_url}" in line
    assert server.chat_requests == []


def test_your_server_with_an_api_key_is_asked_with_it(tmp_path: Path) -> None:
    """``llama-server --api-key K`` answers ``/v1/models`` only with the key: "your server"
    is asked with the key you set (and no other server gets it); without it, the line says
    the key was refused instead of "no model configured" alone."""
    keyed = FakeOpenAIServer(model="/models/tiny.gguf", api_key="sekret")
    other = FakeOpenAIServer(model="other-model")
    with keyed, other:
        env = {local_models.PROBE_ENV: f"Ollama={other.base_url}"}
        args = ["-p", "hi", "--base-url", keyed.base_url]
        done = run_cli([*args, "--api-key", "sekret"], tmp_path, tmp_path / "home", env)
        assert done.rc == 2, done.stderr
        line = done.stderr.strip()
        assert f"your server at {keyed.base_url} (/models/tiny.gguf)" in line
        assert f"--model /models/tiny.gguf --base-url {keyed.base_url}" in line
        assert other.requests and all("authorization" not in r.headers for r in other.requests)

        done = run_cli(args, tmp_path, tmp_path / "home", {local_models.PROBE_ENV: ""})
        assert done.rc == 2, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1
        assert f"your server at {keyed.base_url} refused the API key (HTTP 401)" in line
        assert "--api-key" in line
        assert keyed.chat_requests == [] and other.chat_requests == []


@needs_doctor
def test_doctor_asks_your_keyed_server_with_the_key(tmp_path: Path) -> None:
    with FakeOpenAIServer(model="/models/tiny.gguf", api_key="sekret") as keyed:
        env = {
            local_models.PROBE_ENV: "",
            "MYCODE_BASE_URL": keyed.base_url,
            "MYCODE_API_KEY": "sekret",
        }
        done = run_cli(["doctor", "--cwd", str(tmp_path)], tmp_path, tmp_path / "home", env)
        report = json.loads(done.stdout)
        assert report["local_servers"] == [
            {"name": "your server", "url": keyed.base_url, "models": ["/models/tiny.gguf"]}
        ]


@needs_doctor
@pytest.mark.parametrize("router", [False, True])
def test_doctor_accepts_any_model_name_on_a_single_model_llama_server(
    tmp_path: Path, router: bool
) -> None:
    """A ``llama-server`` started with one model lists it by its file path and answers any
    ``model`` with it, so ``--model tiny`` is no problem there; its router mode (entries with
    a ``status``) serves only the models it lists."""
    entry: dict[str, object] = {"owned_by": "llamacpp"}
    entry.update({"status": {"value": "loaded"}} if router else {"meta": {"n_ctx": 4096}})
    with FakeOpenAIServer(model="/models/tiny.gguf", model_metadata=entry) as llama:
        env = {
            local_models.PROBE_ENV: "",
            "MYCODE_MODEL": "tiny",
            "MYCODE_BASE_URL": llama.base_url,
        }
        done = run_cli(["doctor", "--cwd", str(tmp_path)], tmp_path, tmp_path / "home", env)
        report = json.loads(done.stdout)
        flagged = [p for p in report["problems"] if "does not list the model 'tiny'" in p]
        assert bool(flagged) == router, report["problems"]


def test_a_server_still_loading_its_model_is_named_so(tmp_path: Path) -> None:
    """``llama-server`` answers every request with ``503 Loading model`` until its model is
    in memory: with no model configured, the line names it (as the probe's server, or as
    yours) instead of finding nothing."""
    with FakeOpenAIServer(loading=1000) as llama:
        env = {local_models.PROBE_ENV: f"llama.cpp={llama.base_url}"}
        done = run_cli(["-p", "hi"], tmp_path, tmp_path / "home", env)
        assert done.rc == 2, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1
        assert f"llama.cpp at {llama.base_url} is still loading its model (HTTP 503)" in line
        assert f"--base-url {llama.base_url}" in line
        args = ["-p", "hi", "--base-url", llama.base_url]
        done = run_cli(args, tmp_path, tmp_path / "home", {local_models.PROBE_ENV: ""})
        assert done.rc == 2 and f"your server at {llama.base_url} is still loading" in done.stderr
        assert llama.chat_requests == []


@needs_doctor
def test_doctor_names_a_server_still_loading_its_model(tmp_path: Path) -> None:
    with FakeOpenAIServer(loading=1000) as llama:
        args = ["doctor", "--cwd", str(tmp_path)]
        env = {local_models.PROBE_ENV: f"llama.cpp={llama.base_url}"}
        report = json.loads(run_cli(args, tmp_path, tmp_path / "home", env).stdout)
        assert report["local_servers"] == [
            {"name": "llama.cpp", "url": llama.base_url, "models": [], "loading": True}
        ]
        env.update(MYCODE_MODEL="tiny", MYCODE_BASE_URL=llama.base_url)
        done = run_cli(args, tmp_path, tmp_path / "home", env)
        report = json.loads(done.stdout)
        assert report["base_url"]["loading"] is True and done.rc == 1
        assert any("is still loading its model" in p for p in report["problems"])


@needs_doctor
def test_doctor_checks_the_server_and_model_given_as_flags(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    """``mycode doctor --base-url URL [--model NAME]`` (or the flags before ``doctor``) checks
    that server as a run with those flags would use it, instead of refusing the option."""
    home, env = tmp_path / "home", {local_models.PROBE_ENV: ""}
    done = run_cli(["doctor", "--base-url", server.base_url], tmp_path, home, env)
    report = json.loads(done.stdout)
    assert report["local_servers"] == [
        {"name": "your server", "url": server.base_url, "models": ["qwen2.5-coder:7b"]}
    ]
    flags = ["--base-url", server.base_url, "--model", "llama3", "--api-key", "k"]
    for args in (["doctor", *flags], [*flags, "doctor"]):
        done = run_cli(args, tmp_path, home, env)
        report = json.loads(done.stdout)
        assert report["model"]["name"] == "llama3" and report["base_url"]["checked"], args
        assert any("does not list the model 'llama3'" in p for p in report["problems"])
        assert "ignored" not in done.stderr
