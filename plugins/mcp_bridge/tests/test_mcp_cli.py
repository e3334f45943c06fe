"""`mycode mcp ...` commands and end-to-end runs through the `mycode` command line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp_helpers import BIN, assert_not_imported, feature
from mycode_mcp_bridge.cli import mcp_cli

from mycode_core.testing.host import process_alive, wait_until


def _invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(mcp_cli, list(args), catch_exceptions=False)


def test_add_list_remove_round_trip(workspace: Path, home: Path) -> None:
    ws = str(workspace)
    done = _invoke(
        "add",
        "time",
        "--scope",
        "user",
        "--startup-timeout",  # a real Python server: generous on a loaded machine
        "120",
        "--",
        str(BIN / "mcp-server-time"),
        "--local-timezone",
        "UTC",
    )
    assert done.exit_code == 0, done.output
    feat = feature()
    done = _invoke(
        "add",
        "feat",
        "--cwd",
        ws,
        "-e",
        "A=1",
        "-e",
        "B=x=y",
        "--timeout",
        "30",
        "--startup-timeout",
        "120",
        "--",
        feat["command"],
        *feat["args"],
    )
    assert done.exit_code == 0, done.output
    done = _invoke(
        "add",
        "web",
        "--scope",
        "project",
        "--cwd",
        ws,
        "--transport",
        "http",
        "http://127.0.0.1:9/mcp",
        "-H",
        "Authorization: Bearer ${TOKEN}",
    )
    assert done.exit_code == 0, done.output

    user = json.loads((home / "mcp.json").read_text())
    assert (home / "mcp.json").stat().st_mode & 0o777 == 0o600  # a new one may hold tokens
    assert user == {
        "mcpServers": {
            "time": {
                "command": str(BIN / "mcp-server-time"),
                "args": ["--local-timezone", "UTC"],
                "startup_timeout": 120.0,
            }
        }
    }
    local = json.loads((home / "mcp-local.json").read_text())
    entry = local["projects"][str(workspace.resolve())]["mcpServers"]["feat"]
    assert entry == {
        "command": feat["command"],
        "args": feat["args"],
        "env": {"A": "1", "B": "x=y"},
        "timeout": 30.0,
        "startup_timeout": 120.0,
    }
    project = json.loads((workspace / ".mcp.json").read_text())
    assert project == {
        "mcpServers": {
            "web": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            }
        }
    }

    listed = _invoke("list", "--json", "--cwd", ws)
    assert listed.exit_code == 0, listed.output
    rows = {row["name"]: row for row in json.loads(listed.stdout)["servers"]}
    assert rows["time"]["status"] == "ready" and rows["time"]["scope"] == "user", rows["time"]
    assert "get_current_time" in rows["time"]["tools"]
    assert rows["feat"]["status"] == "ready" and "echo" in rows["feat"]["tools"]
    assert rows["web"]["status"] == "needs-approval" and rows["web"]["tools"] == []

    text = _invoke("list", "--cwd", ws)
    assert (
        "time  [user:" in text.output and "ready" in text.output and "needs-approval" in text.output
    )

    assert _invoke("remove", "feat", "--cwd", ws).exit_code == 0
    assert json.loads((home / "mcp-local.json").read_text()) == {"projects": {}}
    assert _invoke("remove", "web", "--cwd", ws, "--scope", "project").exit_code == 0
    assert json.loads((workspace / ".mcp.json").read_text()) == {"mcpServers": {}}


def test_add_and_remove_errors(workspace: Path, home: Path) -> None:
    ws = str(workspace)
    assert _invoke("add", "x", "--cwd", ws).exit_code == 2
    assert _invoke("add", "x", "--cwd", ws, "--transport", "http", "a", "b").exit_code == 2
    assert _invoke("add", "x", "--cwd", ws, "-e", "NOEQUALS", "--", "cmd").exit_code == 2
    assert _invoke("add", "x", "--cwd", ws, "--", "cmd").exit_code == 0
    dup = _invoke("add", "x", "--cwd", ws, "--", "cmd2")
    assert dup.exit_code == 2 and "--force" in dup.output
    assert _invoke("add", "x", "--cwd", ws, "--force", "--", "cmd2").exit_code == 0
    assert _invoke("add", "x", "--cwd", ws, "--scope", "user", "--", "cmd3").exit_code == 0
    both = _invoke("remove", "x", "--cwd", ws)
    assert both.exit_code == 2 and "--scope" in both.output
    missing = _invoke("remove", "nothing", "--cwd", ws)
    assert missing.exit_code == 2 and "no MCP server named 'nothing'" in missing.output


def test_list_reports_failures(workspace: Path, home: Path) -> None:
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"bad": feature("--crash-on-start")}}))
    listed = _invoke("list", "--cwd", str(workspace))
    assert "bad" in listed.output and "failed" in listed.output
    assert "missing API token FOO_TOKEN" in listed.output


def test_approve(workspace: Path, home: Path) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"p": feature()}}))
    rows = json.loads(_invoke("list", "--json", "--cwd", str(workspace)).stdout)["servers"]
    assert rows[0]["status"] == "needs-approval"
    assert _invoke("approve", "--cwd", str(workspace)).exit_code == 0
    rows = json.loads(_invoke("list", "--json", "--cwd", str(workspace)).stdout)["servers"]
    assert rows[0]["status"] == "ready"
    assert _invoke("approve", "--reset", "--cwd", str(workspace)).exit_code == 0
    assert _invoke("approve", "nope", "--cwd", str(workspace)).exit_code == 2
    # a refused one says so, and how to allow it ("not approved" read as never asked)
    assert _invoke("approve", "--deny", "p", "--cwd", str(workspace)).exit_code == 0
    (row,) = json.loads(_invoke("list", "--json", "--cwd", str(workspace)).stdout)["servers"]
    assert row["status"] == "denied"
    assert row["reason"] == "refused for this workspace (allow it with: mycode mcp approve p)"


def test_a_project_servers_headers_helper_waits_for_approval(workspace: Path, home: Path) -> None:
    """A project's ``headersHelper`` is a command like a stdio server's: it does not run before
    the server is approved, and approving shows it."""
    ran = workspace.parent / "helper-ran"
    entry = {"type": "http", "url": "http://127.0.0.1:9/mcp", "headersHelper": f"touch {ran}"}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"p": entry}}))
    rows = json.loads(_invoke("list", "--json", "--cwd", str(workspace)).stdout)["servers"]
    assert rows[0]["status"] == "needs-approval" and not ran.exists()
    approved = _invoke("approve", "--cwd", str(workspace))
    assert f"with headersHelper touch {ran}" in approved.output


# ----------------------------------------------------------------------- through `mycode`

MYCODE = str(BIN / "mycode")


def _mycode(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYCODE_HOME": str(home)}
    return subprocess.run(
        [MYCODE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _scripted_run(
    prompt: str, script: Path, config: Path | str, home: Path, workspace: Path
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """``mycode -p PROMPT`` with the scripted model and ``--mcp-config`` (a file or inline
    JSON); it must succeed."""
    done = _mycode(
        ["-p", prompt, "--model", f"scripted:{script}", "--mcp-config", str(config),
         "--output-format", "stream-json", "--cwd", str(workspace), "--completion-policy", "off"],
        home,
        workspace,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_end_to_end_run_with_mcp_config(workspace: Path, home: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"feat": feature("--marker", str(marker))}}))
    script = tmp_path / "script.json"
    calls = [
        {"name": "mcp__feat__echo", "arguments": {"text": "through the cli"}},
        {"name": "mcp__feat__fail", "arguments": {"reason": "on purpose"}},
        {"name": "mcp__feat__slow_count", "arguments": {"steps": 2}},
    ]
    script.write_text(
        json.dumps([{"content": "using MCP", "tool_calls": calls}, {"content": "all done"}])
    )
    done, events = _scripted_run("use the MCP tools", script, config, home, workspace)
    calls_seen = [e["name"] for e in events if e["type"] == "tool_call"]
    assert calls_seen == ["mcp__feat__echo", "mcp__feat__fail", "mcp__feat__slow_count"]
    results = {e["name"]: e for e in events if e["type"] == "tool_result"}
    assert results["mcp__feat__echo"]["is_error"] is False
    assert results["mcp__feat__echo"]["content"] == "through the cli"
    assert results["mcp__feat__fail"]["is_error"] is True
    assert "on purpose" in results["mcp__feat__fail"]["content"]
    progress = [e for e in events if e["type"] == "progress"]
    assert [p["progress"] for p in progress] == [1.0, 2.0]
    assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "completed"
    assert "noise" not in done.stderr and "starting" not in done.stderr  # server stderr kept out
    pids = [int(p) for p in marker.read_text().split()]
    assert pids and wait_until(lambda: not any(process_alive(p) for p in pids), 10)


def test_mcp_config_takes_inline_json_as_claude_code_does(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A value starting with ``{`` is the servers themselves. It was refused: "no such file"
    (``-p``), click's "File ... does not exist" (``mycode tools``)."""
    inline = json.dumps({"mcpServers": {"time": {"command": str(BIN / "mcp-server-time")}}})
    script = tmp_path / "script.json"
    call = {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}
    script.write_text(json.dumps([{"tool_calls": [call]}, {"content": "done"}]))
    _, events = _scripted_run("what time is it?", script, inline, home, workspace)
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["is_error"] is False and '"timezone":"UTC"' in result["content"]
    listed = _mycode(["tools", "--json", "--mcp-config", inline], home, workspace)
    assert listed.returncode == 0, listed.stderr
    assert "mcp__time__get_current_time" in {row["name"] for row in json.loads(listed.stdout)}
    run = ["-p", "x", "--model", f"scripted:{script}"]
    for args in (run, ["tools"]):
        missing = _mycode([*args, "--mcp-config", "nowhere.json"], home, workspace)
        assert missing.returncode == 2, missing.stderr
        assert "--mcp-config nowhere.json: no such file" in missing.stderr


@pytest.mark.parametrize(("content", "problem"), [
    ("{bad", " is not valid JSON: Expecting property name enclosed in double quotes (line 1)"),
    ('{"servers": {}}', ": no 'mcpServers' object; its 'servers' (VS Code's shape) is not read"),
    ('{"time": {"command": "t"}}', """: no 'mcpServers' object (expected {"mcpServers": ...})"""),
    ("", """: no 'mcpServers' object"""),
])  # fmt: skip
def test_an_mcp_config_file_that_cannot_be_read_is_a_configuration_error(
    workspace: Path, home: Path, tmp_path: Path, content: str, problem: str
) -> None:
    """The user named it: exit 2 and one line saying what is wrong with which file (it was a
    notice, and the run went on without its servers, exit 0)."""
    config = tmp_path / "servers.json"
    config.write_text(content)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "done"}]))
    run = ["-p", "x", "--model", f"scripted:{script}"]
    for args in (run, ["tools"]):
        done = _mycode([*args, "--mcp-config", str(config)], home, workspace)
        assert done.returncode == 2, done.stdout + done.stderr
        (line,) = done.stderr.splitlines()
        assert f"--mcp-config {config}{problem}" in line, line
    inline = _mycode([*run, "--mcp-config", "{bad"], home, workspace)
    assert inline.returncode == 2 and "--mcp-config: inline JSON is not valid JSON" in inline.stderr


def test_what_is_not_json_rpc_on_stdout_stays_out_of_the_terminal_and_the_session(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """A server printing a line that is not JSON-RPC, or bytes that are not UTF-8, on stdout:
    the SDK's complaint goes to the server's log (no traceback on the terminal), and the
    calls are answered (a strict decoder would stop reading stdout: every call would hang)."""
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"feat": feature(timeout=30)}}))
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [{"name": f"mcp__feat__{name}", "arguments": {}}]}
        for name in ("stdout_junk", "stdout_binary", "stdout_junk")
    ]
    script.write_text(json.dumps([*turns, {"content": "all done"}]))
    done, events = _scripted_run("go", script, config, home, workspace)
    results = [(e["is_error"], e["content"]) for e in events if e["type"] == "tool_result"]
    assert results[0] == (False, "answered after junk")
    assert results[1:] == [(False, "answered after binary"), (False, "answered after junk")]
    assert "Traceback" not in done.stderr and "JSON" not in done.stderr, done.stderr
    log = (home / "logs" / "mcp" / "feat.log").read_text()
    assert "[mcp sdk error]" in log and "this line is not JSON-RPC" in log


def test_end_to_end_failed_server_is_a_notice(workspace: Path, home: Path, tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": "/nonexistent/mcp-gone"}}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "nothing to do"}]))
    done, events = _scripted_run("hi", script, config, home, workspace)
    notices = [e for e in events if e["type"] == "notice" and e.get("source") == "mcp_bridge"]
    assert len(notices) == 1 and "command not found" in notices[0]["message"]
    assert events[0]["type"] == "system"
    assert events[-1]["type"] == "result"


def test_mcp_subcommand_is_wired_into_mycode(workspace: Path, home: Path) -> None:
    done = _mycode(
        ["mcp", "add", "t", "--scope", "user", "--", str(BIN / "mcp-server-time")], home, workspace
    )
    assert done.returncode == 0, done.stderr
    listed = _mycode(["mcp", "list", "--json"], home, workspace)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["servers"][0]["tools"] == ["get_current_time", "convert_time"]
    assert _mycode(["mcp", "remove", "t"], home, workspace).returncode == 0


def test_help_does_not_import_mcp() -> None:
    code = (
        "import sys\n"
        "from mycode_core.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in ('mcp', 'anyio', 'httpx2') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = assert_not_imported(code)
    assert "mcp" in done.stdout  # the subcommand is listed


def test_mycode_tools_lists_mcp_tools_and_stops_the_servers(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "pids"
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"feat": feature("--marker", str(marker))}}))
    done = _mycode(
        ["tools", "--json", "--mcp-config", str(config), "--cwd", str(workspace)], home, workspace
    )
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["mcp__feat__echo"]["plugin"] == "mcp_bridge"
    assert rows["mcp__feat__echo"]["parameters"]["type"] == "object"
    assert rows["read_file"]["plugin"] == "builtin_tools"
    pids = [int(p) for p in marker.read_text().split()]
    assert pids and wait_until(lambda: not any(process_alive(p) for p in pids), 10)


def test_slash_mcp_shows_the_sessions_servers(workspace: Path, home: Path, tmp_path: Path) -> None:
    """``/mcp`` (here as ``mycode -p /mcp``) lists this session's servers: a ready one with its
    tools, a failed one with the reason."""
    config = tmp_path / "servers.json"
    servers = {"time": {"command": str(BIN / "mcp-server-time")}, "gone": {"command": "/no/mcp"}}
    config.write_text(json.dumps({"mcpServers": servers}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "unused"}]))
    args = ["-p", "/mcp", "--model", f"scripted:{script}", "--cwd", str(workspace)]
    done = _mycode([*args, "--mcp-config", str(config)], home, workspace)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    ready = lines.index(next(line for line in lines if line.startswith("time  [cli:")))
    assert "2 tool(s): get_current_time, convert_time" in lines[ready + 1]
    failed = lines.index(next(line for line in lines if line.startswith("gone  [cli:")))
    assert "command not found" in lines[failed + 1]
    alone = _mycode(args, home, workspace)
    assert alone.returncode == 0 and "No MCP servers in this session" in alone.stdout


def test_add_json_then_get_shows_the_entry_as_written(workspace: Path, home: Path) -> None:
    """Claude Code's ``mcp add-json NAME JSON`` and ``mcp get NAME``: the entry is checked and
    written to the scope's file; ``get`` shows it without starting it, ``${VAR}`` unexpanded."""
    entry = {"command": "python3", "args": ["srv.py", "--fast"], "env": {"TOKEN": "${MY_TOKEN}"}}
    ws = str(workspace)
    done = _invoke("add-json", "db", json.dumps(entry), "--scope", "project", "--cwd", ws)
    assert done.exit_code == 0, done.output
    assert "Added MCP server 'db' (stdio) to project config" in done.output
    assert json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["db"] == entry
    shown = _invoke("get", "db", "--cwd", ws)
    assert shown.exit_code == 0, shown.output
    assert "db  [project: " in shown.output and "python3 srv.py --fast" in shown.output
    assert "env TOKEN=${MY_TOKEN}" in shown.output and "needs-approval" in shown.output
    data = json.loads(_invoke("get", "db", "--json", "--cwd", ws).output)
    assert data["status"] == "needs-approval" and data["entry"] == entry
    assert data["scope"] == "project" and data["transport"] == "stdio"


def test_add_json_and_get_errors_are_one_line(workspace: Path, home: Path) -> None:
    ws = str(workspace)
    for text, words in (
        ("{not json", "not valid JSON"),
        ('["a"]', "must be a JSON object"),
        ('{"type": "http"}', "url"),
    ):
        done = CliRunner().invoke(mcp_cli, ["add-json", "x", text, "--cwd", ws])
        assert done.exit_code == 2 and words in done.output, done.output
    assert not (workspace / ".mcp.json").exists()
    url = json.dumps({"type": "http", "url": "http://127.0.0.1:9/mcp"})
    assert _invoke("add-json", "web", url, "--cwd", ws).exit_code == 0
    again = CliRunner().invoke(mcp_cli, ["add-json", "web", url, "--cwd", ws])
    assert again.exit_code == 2 and "--force" in again.output
    missing = CliRunner().invoke(mcp_cli, ["get", "nope", "--cwd", ws])
    assert missing.exit_code == 2 and "no MCP server named 'nope'" in missing.output
