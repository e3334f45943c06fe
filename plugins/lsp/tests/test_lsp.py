"""The ``lsp`` plugin against a real language server (pylsp, from the dev dependencies), through
real ``mycode -p`` runs with a scripted model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mycode_lsp.client import LspClient, LspError
from mycode_lsp.diagnostics import diagnostic_lines
from mycode_lsp.specs import parse_spec

from mycode_core.testing import run_cli, script_turn, start_cli, write_script
from mycode_core.testing.host import host_processes, signal_when_ready, wait_until

PYLSP = Path(sys.executable).parent / "pylsp"
pytestmark = pytest.mark.skipif(not PYLSP.exists(), reason="pylsp is not installed")

APP = '''def total(values):
    """Add the values up."""
    return sum(values)


def report(values):
    return f"total: {total(values)}"
'''


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(APP)
    return root


def _server(tmp_path: Path) -> dict[str, Any]:
    """A pylsp entry whose command line names a file of this test (to find its process)."""
    return {
        "command": str(PYLSP),
        "args": ["--log-file", str(tmp_path / "pylsp-own.log")],
        "extensionToLanguage": {".py": "python"},
    }


def _config(home: Path, servers: dict[str, Any]) -> None:
    home.mkdir(exist_ok=True)
    lines = []
    for name, entry in servers.items():
        lines.append(f"[lsp.servers.{name}]")
        lines += [
            f"{key} = {json.dumps(value)}"
            for key, value in entry.items()
            if key != "extensionToLanguage"
        ]
        mapping = ", ".join(f'"{k}" = "{v}"' for k, v in entry["extensionToLanguage"].items())
        lines.append(f"extensionToLanguage = {{ {mapping} }}")
    (home / "config.toml").write_text("\n".join(lines) + "\n")


def _run(ws: Path, home: Path, turns: list[dict[str, Any]], *flags: str) -> Any:
    model = write_script(home.parent / "turns.json", [*turns, {"content": "done"}])
    args = ["-p", "look", "--model", model, "--output-format", "stream-json",
            "--completion-policy", "off", *flags]  # fmt: skip
    done = run_cli(args, ws, home, timeout=120)
    assert done.rc == 0, done.stderr
    return done


def _results(done: Any) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in done.events if e["type"] == "tool_result"}


def _lsp(call_id: str, operation: str, line: int = 1, character: int = 1) -> dict[str, Any]:
    arguments = {"operation": operation, "path": "app.py", "line": line, "character": character}
    return {"id": call_id, "name": "lsp", "arguments": arguments}


def test_the_tool_answers_from_the_server_and_edits_get_its_diagnostics(
    ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _config(home, {"pylsp": _server(tmp_path)})
    turns = [
        {"tool_calls": [_lsp("def", "goToDefinition", 7, 22), _lsp("hover", "hover", 7, 22),
                        _lsp("syms", "documentSymbol"), _lsp("refs", "findReferences", 1, 6)]},
        script_turn("read_file", path="app.py"),
        {"tool_calls": [{"id": "edit", "name": "edit_file", "arguments": {
            "path": "app.py", "old_string": "sum(values)", "new_string": "sum(valuez)"}}]},
    ]  # fmt: skip
    done = _run(ws, home, turns, "--trust")
    results = _results(done)
    assert results["def"]["content"] == "app.py:1:5  def total(values):"
    assert "Add the values up." in results["hover"]["content"]
    assert "function total" in results["syms"]["content"]
    assert "function report" in results["syms"]["content"]
    assert results["refs"]["content"].splitlines() == [
        "app.py:1:5  def total(values):",
        'app.py:7:22  return f"total: {total(values)}"',
    ]
    edited = results["edit"]["content"]
    assert '<diagnostics file="app.py">' in edited
    assert "app.py:3:16: error: undefined name 'valuez' [pyflakes]" in edited
    notices = [e["message"] for e in done.events if e["type"] == "notice"]
    assert "lsp: app.py: 1 error(s), 0 warning(s)" in notices  # the user sees it too
    tools = done.events[0]["tools"]
    assert "lsp" in [t if isinstance(t, str) else t.get("name") for t in tools]
    assert wait_until(lambda: not host_processes(str(tmp_path / "pylsp-own.log")), 10)


def test_a_clean_edit_adds_nothing(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _config(home, {"pylsp": _server(tmp_path)})
    change = {"path": "app.py", "old_string": "sum(values)", "new_string": "sum(values) + 0"}
    edit = {"id": "edit", "name": "edit_file", "arguments": change}
    done = _run(ws, home, [script_turn("read_file", path="app.py"), {"tool_calls": [edit]}],
                "--trust")  # fmt: skip
    assert "<diagnostics" not in _results(done)["edit"]["content"]


def test_an_untrusted_workspace_starts_no_server(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _config(home, {"pylsp": _server(tmp_path)})
    done = _run(ws, home, [{"tool_calls": [_lsp("def", "goToDefinition", 7, 22)]}])
    assert _results(done)["def"]["is_error"] is True  # no such tool
    notices = [e["message"] for e in done.events if e["type"] == "notice"]
    assert any("language servers not started (pylsp)" in n and "untrusted" in n for n in notices)
    assert not (tmp_path / "pylsp-own.log").exists()


def test_a_server_not_installed_is_no_tool_and_one_notice_once_its_files_are_touched(
    ws: Path, tmp_path: Path
) -> None:
    """typescript-lsp installed warned on every run of a Python-only project: a server not
    installed is told once, when a call names a file it would serve."""
    home = tmp_path / "home"
    _config(home, {"gone": {"command": "no-such-langserver", "extensionToLanguage": {".py": "py"}}})
    (ws / "notes.md").write_text("notes\n")
    said = "language server gone: 'no-such-langserver' is not installed"
    quiet = _run(ws, home, [script_turn("read_file", path="notes.md")], "--trust")
    assert not any(said in e.get("message", "") for e in quiet.events), quiet.events
    read = script_turn("read_file", path="app.py")
    turns = [{"tool_calls": [_lsp("def", "goToDefinition", 7, 22)]}, read, read]
    done = _run(ws, home, turns, "--trust")
    assert _results(done)["def"]["is_error"] is True  # no such tool
    notices = [e["message"] for e in done.events if e["type"] == "notice"]
    assert len([n for n in notices if said in n]) == 1, notices


def test_a_server_that_cannot_start_is_the_tools_error(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    exits = {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    _config(home, {"quits": {**exits, "extensionToLanguage": {".py": "python"}}})
    done = _run(ws, home, [{"tool_calls": [_lsp("def", "goToDefinition", 7, 22)]}], "--trust")
    result = _results(done)["def"]
    assert result["is_error"] is True
    assert "language server quits" in result["content"] and "exited" in result["content"]
    assert "logs/lsp/quits.log" in result["content"]


def test_a_server_gone_before_its_first_message_says_it_exited(tmp_path: Path) -> None:
    """The process ended before the reader saw its output close: still "exited", with its code."""
    spec = parse_spec(
        "quits", {"command": sys.executable, "extensionToLanguage": {".py": "py"}}, "config"
    )
    client = LspClient(spec, tmp_path, tmp_path / "quits.log", lambda method, params: None)
    client.process = subprocess.Popen(
        [sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE
    )
    client.process.wait()
    with pytest.raises(LspError, match=r"the language server quits exited \(exit code 3\)"):
        client.notify("initialized", {})
    client.close()


class _ClosedPipe:
    """A server process whose end of the pipe is closed: exited with 3 (``code``) but not yet
    reaped when the write fails, or (``code=None``) still running after closing stdin."""

    def __init__(self, code: int | None) -> None:
        self.stdin, self.code = self, code

    def poll(self) -> None:
        return None

    def write(self, data: bytes) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> int:
        if self.code is None:
            raise subprocess.TimeoutExpired("server", timeout or 0)
        return self.code


def test_a_write_to_a_server_that_is_exiting_says_it_exited(tmp_path: Path) -> None:
    spec = parse_spec(
        "quits", {"command": sys.executable, "extensionToLanguage": {".py": "py"}}, "config"
    )
    client = LspClient(spec, tmp_path, tmp_path / "quits.log", lambda method, params: None)
    client.process = _ClosedPipe(3)  # type: ignore[assignment]
    with pytest.raises(LspError, match=r"^the language server quits exited \(exit code 3\)$"):
        client.notify("initialized", {})
    client.process = _ClosedPipe(None)  # type: ignore[assignment]
    with pytest.raises(LspError, match=r"^the language server quits went away \(.*Broken pipe"):
        client.notify("initialized", {})


def test_a_claude_code_plugin_folders_lsp_servers(ws: Path, tmp_path: Path) -> None:
    """``lspServers`` of a plugin folder (``--plugin-dir``), in ``.lsp.json``: listed by
    ``mycode plugins`` and used by a run, ``${CLAUDE_PLUGIN_ROOT}`` expanded."""
    plugin = tmp_path / "py-lsp"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "py-lsp"}))
    shutil.copy(PYLSP, plugin / "pylsp")
    entry = {**_server(tmp_path), "command": "${CLAUDE_PLUGIN_ROOT}/pylsp"}
    (plugin / ".lsp.json").write_text(json.dumps({"python": entry}))
    home = tmp_path / "home"
    listed = run_cli(["plugins", "--plugin-dir", str(plugin)], ws, home)
    row = next(p for p in json.loads(listed.stdout) if p["name"] == "py-lsp")
    assert row["contributes"]["lsp_servers"] == ["python"]
    done = _run(ws, home, [{"tool_calls": [_lsp("def", "goToDefinition", 7, 22)]}],
                "--trust", "--plugin-dir", str(plugin))  # fmt: skip
    assert _results(done)["def"]["content"] == "app.py:1:5  def total(values):"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"extensionToLanguage": {".py": "python"}}, "no command"),
        ({"command": "x"}, "no extensionToLanguage"),
        ({"command": "x", "extensionToLanguage": {".py": "python"}, "transport": "socket"},
         "transport 'socket' is not supported"),
    ],
)  # fmt: skip
def test_entries_that_cannot_be_used_say_why(entry: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_spec("s", entry, "config")


def test_spec_reads_claude_codes_fields() -> None:
    spec = parse_spec(
        "go",
        {"command": "gopls", "args": ["serve"], "extensionToLanguage": {"GO": "go"},
         "startupTimeout": 120000, "env": {"A": 1}, "maxRestarts": 3},
        "plugin:gopls-lsp",
    )  # fmt: skip
    assert (spec.args, spec.startup_timeout, spec.env) == (("serve",), 120.0, {"A": "1"})
    assert spec.language_of(".go") == "go" and spec.language_of(".py") is None


def test_only_errors_and_warnings_are_shown() -> None:
    def at(line: int, severity: int, message: str) -> dict[str, Any]:
        return {"range": {"start": {"line": line, "character": 0}}, "severity": severity,
                "message": message, "source": "srv"}  # fmt: skip

    lines = diagnostic_lines("a.py", [at(4, 2, "w"), at(9, 3, "info"), at(1, 1, "e")])
    assert lines == ["a.py:2:1: error: e [srv]", "a.py:5:1: warning: w [srv]"]


def _fake_config(home: Path, record: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text(
        "[lsp.servers.fake]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(Path(__file__).parent / 'fake_lsp.py'), str(record)])}\n"
        'extensionToLanguage = { ".py" = "python" }\n'
        'env = { FAKE_OWN_TOKEN = "kept" }\n'
        "settings = { fake = { level = 3 } }\n"
    )


def test_a_server_that_keeps_crashing_is_started_again_a_few_times(
    ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _fake_config(home, tmp_path / "record.json")
    turns = [{"tool_calls": [_lsp(f"h{i}", "hover", 1, 1)]} for i in range(5)]
    results = _results(_run(ws, home, turns, "--trust"))
    assert all(results[f"h{i}"]["is_error"] for i in range(5))
    assert "exited" in results["h0"]["content"]
    assert "stopped 4 times in this run; not started again" in results["h4"]["content"]


def test_the_server_gets_no_secrets_and_its_settings(ws: Path, tmp_path: Path) -> None:
    """The environment's API keys are not the server's; its entry's own ``env`` is; its
    ``workspace/configuration`` is answered from ``settings``; a write gets its warning."""
    record = tmp_path / "record.json"
    home = tmp_path / "home"
    _fake_config(home, record)
    turns = [script_turn("write_file", path="new.py", content="x = 1\n"), {"content": "done"}]
    model = write_script(tmp_path / "turns.json", turns)
    done = run_cli(
        ["-p", "go", "--model", model, "--output-format", "stream-json", "--trust"],
        ws, home, {"OPENAI_API_KEY": "sk-secret", "SOME_SERVICE_TOKEN": "t"}, timeout=120,
    )  # fmt: skip
    assert done.rc == 0, done.stderr
    written = next(e for e in done.events if e["type"] == "tool_result")
    assert "new.py:1:1: warning: seen textDocument/didOpen [fake]" in written["content"]
    seen = json.loads(record.read_text())
    assert "OPENAI_API_KEY" not in seen["env"] and "SOME_SERVICE_TOKEN" not in seen["env"]
    assert seen["env"]["FAKE_OWN_TOKEN"] == "kept"
    assert seen["configuration"] == [{"level": 3}]
    assert seen["initialize"]["rootUri"] == ws.resolve().as_uri()


def _write(call_id: str, path: str) -> dict[str, Any]:
    arguments = {"path": path, "content": "x = 1\n"}
    return {"tool_calls": [{"id": call_id, "name": "write_file", "arguments": arguments}]}


def test_a_subagent_uses_the_sessions_servers(ws: Path, tmp_path: Path) -> None:
    """A subagent (``delegate_task``) asks the session's server and its writes get their
    diagnostics: one server for the whole session, stopped once, at the end of the run."""
    record = tmp_path / "record.json"
    home = tmp_path / "home"
    _fake_config(home, record)
    task = {"task": "CHILD: look, then write", "agent": "general"}
    turns = [
        {"tool_calls": [{"id": "d1", "name": "delegate_task", "arguments": task}]},
        {"tool_calls": [_lsp("c-syms", "documentSymbol")]},  # the child's turns
        _write("c-write", "child.py"),
        {"content": "child done"},
        _write("m-write", "main.py"),  # the main agent's again
    ]
    results = _results(_run(ws, home, turns, "--trust"))
    assert results["c-syms"]["agent_id"] and not results["c-syms"]["is_error"]
    assert results["c-syms"]["content"] == "no symbols in app.py"
    warning = "{}:1:1: warning: seen textDocument/didOpen [fake]"
    assert warning.format("child.py") in results["c-write"]["content"]
    assert warning.format("main.py") in results["m-write"]["content"]
    assert not results["d1"]["is_error"]
    assert len(Path(f"{record}.starts").read_text().split()) == 1
    assert wait_until(lambda: not host_processes(str(record)), 10)


def test_a_sigkilled_mycode_leaves_no_language_server_behind(ws: Path, tmp_path: Path) -> None:
    """``kill -9`` runs no clean-up: a server that stays up after its stdin ends (or a worker
    it started) lived on; its process group is now killed by the lifeline."""
    home = tmp_path / "home"
    server = f"sleep 3101 & exec {sys.executable} {Path(__file__).parent / 'fake_lsp.py'} rec"
    _config(home, {"fake": {"command": "sh", "args": ["-c", server],
                            "extensionToLanguage": {".py": "python"}}})  # fmt: skip
    turns = [script_turn("write_file", path="b.py", content="x = 1\n"),
             script_turn("run_command", command="touch ready; sleep 3102")]  # fmt: skip
    model = write_script(tmp_path / "turns.json", turns)
    args = ["-p", "go", "--model", model, "--permission-mode", "bypass", "--trust"]
    proc = start_cli(args, ws, home, {"MYCODE_NO_BWRAP": "1"})
    assert signal_when_ready(proc, ws / "ready") == -9
    assert (ws / "rec").exists()  # the server did run
    assert wait_until(lambda: not host_processes("sleep 310"), 15)


TEAM_LSP = '''
from mycode_core import hookimpl, tool

@tool(read_only=True)
def lsp(operation: str) -> str:
    """A team's own code intelligence."""
    return "team"

@hookimpl
def register_tools(register):
    register(lsp)
'''


def test_the_lsp_tool_is_this_repositorys_and_wins_a_name_collision(
    ws: Path, tmp_path: Path
) -> None:
    """SPEC §7: the tool of this repository's plugins keeps its name; the lsp plugin is one."""
    from mycode_core.testing import write_plugin_dist

    site = tmp_path / "site"
    write_plugin_dist(site, "teamlsp", TEAM_LSP)
    home = tmp_path / "home"
    _config(home, {"python": _server(tmp_path)})
    assert run_cli(["trust", str(ws)], ws, home).rc == 0  # language servers need trust
    done = run_cli(["tools", "--json"], ws, home, pythonpath=[site])
    (row,) = [row for row in json.loads(done.stdout) if row["name"] == "lsp"]
    assert (row["plugin"], row.get("shadowed")) == ("lsp", ["teamlsp"]), done.stderr
