"""Reading server entries from every config source."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mycode_mcp_bridge.config import ConfigProblem, expand, load_servers, parse_server

from mycode_core.config import Settings, load_settings


def test_stdio_entry_expands_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "s3cret")
    monkeypatch.delenv("NOPE", raising=False)
    spec = parse_server(
        "gh",
        {
            "command": "${BIN_DIR:-/usr/bin}/server",
            "args": ["--token=${TOKEN}", "${NOPE}"],
            "env": {"API_TOKEN": "${TOKEN}", "PLAIN": "x"},
        },
        "user",
        "mcp.json",
    )
    assert spec.transport == "stdio"
    assert spec.command == "/usr/bin/server"
    assert spec.args == ["--token=s3cret", ""]
    assert spec.env == {"API_TOKEN": "s3cret", "PLAIN": "x"}
    assert spec.missing_vars == ["NOPE"]
    assert spec.trusted
    assert "s3cret" not in spec.describe() and "--token=${TOKEN}" in spec.describe()


def test_json_values_that_are_not_strings_are_written_as_json_writes_them() -> None:
    """``"env": {"DEBUG": true, "PORT": 3000}``: a server got ``DEBUG=True`` (Python's
    spelling) and ``null`` became the text ``None``; Node-based clients pass ``true``."""
    spec = parse_server(
        "srv",
        {"command": "srv", "args": ["--verbose", True, 2],
         "env": {"DEBUG": True, "PORT": 3000, "RATIO": 0.5, "UNSET": None}},
        "user",
        "mcp.json",
    )  # fmt: skip
    assert spec.args == ["--verbose", "true", "2"]
    assert spec.env == {"DEBUG": "true", "PORT": "3000", "RATIO": "0.5"}
    http = parse_server(
        "web", {"type": "http", "url": "http://h/mcp", "headers": {"X-On": False, "X-No": None}},
        "user", "mcp.json",
    )  # fmt: skip
    assert http.headers == {"X-On": "false"}


def test_a_file_in_vs_codes_shape_is_a_problem_not_silence(tmp_path: Path) -> None:
    """VS Code's ``{"servers": {...}}`` gave no servers and said nothing."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    config = tmp_path / "vscode.json"
    config.write_text(json.dumps({"servers": {"time": {"command": "mcp-server-time"}}}))
    loaded = load_servers(ws, home, Settings(mcp_config_files=[str(config)]))
    assert loaded.servers == {}
    assert len(loaded.problems) == 1 and "rename it to 'mcpServers'" in loaded.problems[0]


def test_http_entry_expands_headers_and_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOST", "example.test")
    monkeypatch.setenv("KEY", "k1")
    spec = parse_server(
        "web",
        {
            "type": "http",
            "url": "https://${HOST}/mcp",
            "headers": {"Authorization": "Bearer ${KEY}"},
        },
        "project",
        ".mcp.json",
    )
    assert (spec.transport, spec.url) == ("http", "https://example.test/mcp")
    assert spec.headers == {"Authorization": "Bearer k1"}
    assert not spec.trusted
    assert parse_server("w", {"url": "http://x/mcp"}, "cli", "f").transport == "http"
    assert parse_server("w", {"type": "sse", "url": "http://x/sse"}, "cli", "f").transport == "sse"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"args": []}, "'command' \\(a program to run\\) is required for stdio$"),
        ({"command": 3}, "'command' \\(a program to run\\) is required for stdio \\(got 3\\)"),
        ({"type": "http"}, "'url' is required"),
        ({"type": "websocket", "url": "ws://x"}, "unknown type 'websocket'"),
        ({"command": "x", "args": "not a list"}, "'args' must be a list"),
        ({"command": "x", "env": ["A=1"]}, "'env' must be an object"),
        ({"command": "x", "timeout": -1}, "'timeout' must be positive"),
        ("just a string", "entry must be an object"),
    ],
)
def test_bad_entries_name_the_problem(entry: object, message: str) -> None:
    with pytest.raises(ConfigProblem, match=message):
        parse_server("bad", entry, "user", "mcp.json")


def test_expand_default_and_missing() -> None:
    missing: list[str] = []
    env = {"A": "1"}
    assert expand("${A}-${B:-two}-${C}", missing, env) == "1-two-"
    assert missing == ["C"]


def test_redact_writes_expanded_values_back_as_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MYCODE_TEST_TOKEN", "tok-SECRET-42")
    monkeypatch.setenv("MYCODE_TEST_SHORT", "ab")
    entry = {"command": "srv", "env": {"T": "${MYCODE_TEST_TOKEN}", "S": "${MYCODE_TEST_SHORT}"}}
    spec = parse_server("s", entry, "user", "mcp.json")
    assert spec.env == {"T": "tok-SECRET-42", "S": "ab"}
    said = "bad token tok-SECRET-42 (ab)"
    assert spec.redact(said) == "bad token ${MYCODE_TEST_TOKEN} (ab)"  # short values stay


def _write(path: Path, servers: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_sources_and_precedence(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _write(home / "mcp.json", {"a": {"command": "user-a"}, "b": {"command": "user-b"}})
    _write(ws / ".mcp.json", {"b": {"command": "project-b"}, "c": {"command": "project-c"}})
    (home / "mcp-local.json").write_text(
        json.dumps({"projects": {str(ws.resolve()): {"mcpServers": {"c": {"command": "local-c"}}}}})
    )
    (home / "config.toml").write_text('[mcp_servers.d]\ncommand = "toml-d"\n')
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text('[mcp_servers.e]\ncommand = "toml-e"\n')
    cli_file = tmp_path / "extra.json"
    _write(cli_file, {"a": {"command": "cli-a"}})
    settings = load_settings(ws, home, {"mcp_config_files": [str(cli_file)]})
    loaded = load_servers(ws, home, settings)
    got = {name: (s.command, s.scope) for name, s in loaded.servers.items()}
    assert got == {
        "a": ("cli-a", "cli"),
        "b": ("project-b", "project"),
        "c": ("local-c", "local"),
        "d": ("toml-d", "user"),
        "e": ("toml-e", "project"),
    }
    assert loaded.problems == []


def test_problems_are_collected_not_raised(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / ".mcp.json").write_text("{not json")
    _write(home / "mcp.json", {"ok": {"command": "fine"}, "bad": {"type": "http"}})
    settings = Settings(mcp_config_files=[str(tmp_path / "missing.json"), '{"mcpServers": 3}'])
    loaded = load_servers(ws, home, settings)
    assert list(loaded.servers) == ["ok"]
    text = "\n".join(loaded.problems)
    assert ".mcp.json is not valid JSON" in text
    assert "'url' is required" in text
    assert "file not found" in text and "missing.json" in text
    assert "'mcpServers' must be an object" in text


def test_disabled_entry_removes_server(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _write(home / "mcp.json", {"a": {"command": "x"}})
    _write(ws / ".mcp.json", {"a": {"command": "x", "disabled": True}})
    assert load_servers(ws, home, Settings()).servers == {}


def test_a_bare_disabled_entry_hides_an_earlier_server(tmp_path: Path) -> None:
    """``{"disabled": true}`` with nothing else, in ``--mcp-config`` or ``[mcp_servers.NAME]``,
    was read as a stdio entry missing its ``command``: a problem, and the server still ran."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    _write(home / "mcp.json", {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}})
    (ws / ".mycode").mkdir(parents=True)
    (ws / ".mycode" / "config.local.toml").write_text("[mcp_servers.b]\ndisabled = true\n")
    (home / "trusted.json").write_text(json.dumps({"folders": {str(ws.resolve()): {}}}))
    inline = json.dumps({"mcpServers": {"a": {"disabled": True}}})
    loaded = load_servers(ws, home, load_settings(ws, home, {"mcp_config_files": [inline]}))
    assert list(loaded.servers) == ["c"] and loaded.problems == []


def test_inline_json_config() -> None:
    settings = Settings(mcp_config_files=['{"mcpServers": {"t": {"command": "tool"}}}'])
    loaded = load_servers(Path("/nonexistent-ws"), Path("/nonexistent-home"), settings)
    assert loaded.servers["t"].scope == "cli" and loaded.servers["t"].trusted


def test_fingerprint_changes_with_entry() -> None:
    one = parse_server("s", {"command": "a"}, "project", "f")
    same = parse_server("s", {"command": "a"}, "project", "f")
    other = parse_server("s", {"command": "b"}, "project", "f")
    assert one.fingerprint() == same.fingerprint() != other.fingerprint()


def test_a_literal_entry_keeps_placeholders_and_its_transport() -> None:
    """Folder plugins' servers (``"literal": true``): nothing is expanded, transports kept."""
    from mycode_mcp_bridge.config import parse_server

    stdio = {"command": "srv", "args": ["/a", "${HOME}"], "env": {"H": "${HOME}"}, "literal": True}
    spec = parse_server("pl_s", stdio, "cli", "test")
    assert spec.args[1] == "${HOME}" and spec.env["H"] == "${HOME}"
    remote = {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    http = parse_server("pl_h", {"type": "streamable-http", **remote, "literal": True}, "cli", "t")
    assert http.transport == "http" and http.headers["Authorization"] == "Bearer ${TOKEN}"
    sse = parse_server("pl_e", {"type": "sse", "url": "https://a.example/sse"}, "cli", "t")
    assert sse.transport == "sse"


def test_git_env_of_an_untrusted_workspace(tmp_path: Path) -> None:
    """The overrides come after the entry's own ``GIT_CONFIG_*``; a ``.git`` leading out of
    the workspace makes git find no repository at all."""
    from mycode_mcp_bridge.gitguard import git_env

    subprocess.run(["git", "init", "-q", str(tmp_path / "ws")], check=True)
    env = git_env(tmp_path / "ws", {"GIT_CONFIG_COUNT": "1"})
    assert env["GIT_CONFIG_KEY_1"] == "core.fsmonitor" and env["GIT_CONFIG_VALUE_1"] == "false"
    assert int(env["GIT_CONFIG_COUNT"]) > 2 and "GIT_CONFIG_KEY_0" not in env
    assert "diff.external" not in env.values()  # not named by the repository: left alone
    elsewhere = tmp_path / "elsewhere"
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    refused = git_env(tmp_path / "out", {})
    assert set(refused) == {"GIT_DIR"} and not Path(refused["GIT_DIR"]).exists()


def test_a_server_knows_the_project_folder_as_claude_code_says_it(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``${CLAUDE_PROJECT_DIR}`` in an entry is the workspace (plugins' ``.mcp.json`` files
    name it, e.g. a filesystem server's root), and stdio servers get it in their environment,
    as Claude Code gives both; set by the entry itself, the entry wins."""
    from mcp_helpers import Run, feature

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    seen = "${CLAUDE_PROJECT_DIR}/environ.json"
    other = workspace / "other.json"
    servers = {
        "fs": feature("--environ-to", seen),
        "own": feature("--environ-to", str(other), env={"CLAUDE_PROJECT_DIR": "/elsewhere"}),
    }
    run = Run(workspace, home, servers).start()
    try:
        assert {server.state for server in run.bridge.connections.values()} == {"ready"}
    finally:
        run.close()
    environ = json.loads((workspace / "environ.json").read_text())
    assert environ["CLAUDE_PROJECT_DIR"] == str(workspace)
    assert json.loads(other.read_text())["CLAUDE_PROJECT_DIR"] == "/elsewhere"
    assert not [n for n in run.notices() if "CLAUDE_PROJECT_DIR" in n]
