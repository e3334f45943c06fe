"""todo_write, the plugin's hooks through a real plugin manager, and ``mycode doctor``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mycode_builtin_tools
from click.testing import CliRunner
from mycode_builtin_tools.doctor import make_command

from mycode_core.plugins import get_plugin_manager
from mycode_core.records import Tool, ToolCall


def test_todo_write_validates_and_stores(run, context) -> None:
    result = run(
        "todo_write",
        todos=[
            {"content": "write tests", "status": "completed"},
            {"content": "fix bug", "status": "in_progress", "id": "b"},
            {"content": "docs", "status": "pending"},
        ],
    )
    assert not result.is_error
    assert result.text() == (
        "Todos (1/3 completed):\n[x] 1. write tests\n[>] b. fix bug\n[ ] 3. docs"
    )
    assert context.store["todos"][1] == {"content": "fix bug", "status": "in_progress", "id": "b"}


def test_todo_write_rejects_bad_lists(run, context) -> None:
    two_active = [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "in_progress"},
    ]
    assert run("todo_write", todos=two_active).is_error
    assert run("todo_write", todos=[{"content": "a", "status": "doing"}]).is_error
    assert run("todo_write", todos=[{"content": " ", "status": "pending"}]).is_error
    dup = [
        {"content": "a", "status": "pending", "id": 1},
        {"content": "b", "status": "pending", "id": 1},
    ]
    assert run("todo_write", todos=dup).is_error
    assert "todos" not in context.store
    assert run("todo_write", todos=[]).text() == "Todo list cleared."


def test_todo_write_schema_offers_an_optional_string_id(context) -> None:
    """SPEC §3: ``todos`` is a list of ``{content, status, id?}``; the model is told of ``id``."""
    pm = get_plugin_manager(load_entry_points=False, extra_plugins=[mycode_builtin_tools])
    tools: list[Tool] = []
    pm.hook.register_tools(register=tools.append, context=context)
    [todo] = [tool for tool in tools if tool.name == "todo_write"]
    item = todo.input_schema["properties"]["todos"]["items"]
    assert list(item["properties"]) == ["content", "status", "id"]
    assert item["properties"]["id"] == {"type": "string"}
    assert item["required"] == ["content", "status"]


def test_hooks_register_tools_and_policy(context) -> None:
    pm = get_plugin_manager(load_entry_points=False, extra_plugins=[mycode_builtin_tools])
    tools: list[Tool] = []
    pm.hook.register_tools(register=tools.append, context=context)
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
        "run_command",
        "todo_write",
    }
    assert {n for n, t in by_name.items() if t.concurrency_safe} == {"read_file", "glob", "grep"}
    assert all(t.plugin == "builtin_tools" for t in tools)
    assert by_name["run_command"].risk == "high" and not by_name["run_command"].read_only
    assert by_name["edit_file"].input_schema["required"] == ["path", "old_string", "new_string"]
    grep_props = by_name["grep"].input_schema["properties"]
    assert set(grep_props) == {
        "pattern",
        "path",
        "glob",
        "output_mode",
        "case_insensitive",
        "context",
        "head_limit",
    }
    call = ToolCall(id="1", name="run_command", arguments={"command": "rm -rf /"})
    verdict = pm.hook.permission_verdict(call=call, tool=by_name["run_command"], context=context)
    assert verdict.decision == "deny"


def test_entry_point_is_installed() -> None:
    from importlib.metadata import entry_points

    names = {ep.name: ep.value for ep in entry_points(group="mycode")}
    assert names.get("builtin_tools") == "mycode_builtin_tools"


def test_import_is_light() -> None:
    code = (
        "import sys, mycode_builtin_tools\n"
        "heavy = [m for m in ('openai', 'mcp', 'jsonschema', 'rich', 'pathspec',\n"
        "         'mycode_builtin_tools.tools', 'mycode_builtin_tools.permissions.policy')\n"
        "         if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_doctor_reports_json(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MYCODE_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(make_command(), ["--cwd", str(tmp_path)])
    data = json.loads(result.stdout)
    assert data["problems"]  # no model configured here
    assert result.exit_code == 1, result.output  # SPEC §2: problems → exit 1
    assert data["workspace"] == str(tmp_path.resolve())
    assert data["ripgrep"]["version"].startswith("ripgrep")
    assert set(data["sandbox"]) >= {"available", "active", "mechanism"}
    assert data["sandbox"]["active"] is data["sandbox"]["available"]
    assert isinstance(data["problems"], list)
