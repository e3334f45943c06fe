"""The built-in tools are written like a third party's ``@tool``: typed parameters, the
core's resolved paths, no string dispatch and no second boundary call."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from mycode_builtin_tools.tools import build_tools

import mycode_core.paths
from mycode_core.paths import bind_path
from mycode_core.records import RunContext, ToolResult

EXPECTED_PATHS = {
    "read_file": {"path": "read"},
    "write_file": {"path": "write"},
    "edit_file": {"path": "write"},
    "glob": {"path": "read"},
    "grep": {"path": "read"},
    "run_command": {},
    "todo_write": {},
}


def test_each_builtin_is_its_own_typed_function() -> None:
    tools = {tool.name: tool for tool in build_tools()}
    assert set(tools) == set(EXPECTED_PATHS)
    for name, tool in tools.items():
        func = tool.handler.__wrapped__  # type: ignore[attr-defined]
        assert func.__module__.startswith("mycode_builtin_tools.tools."), name
        params = inspect.signature(func).parameters
        assert "arguments" not in params, name
        schema_names = set(tool.input_schema["properties"])
        # every schema property is a parameter of the function; the rest is the RunContext
        assert schema_names <= set(params), name
        assert len(set(params) - schema_names) == 1, name
        assert tool.paths == EXPECTED_PATHS[name], name


def _bound(workspace: Path, rel: str, *, writable: bool) -> Path:
    return bind_path((workspace / rel).resolve(), workspace, writable=writable)


@pytest.fixture
def no_boundary(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make every reachable ``resolve_in_workspace`` record its calls (and refuse)."""
    calls: list[Any] = []

    def refuse(raw: object, context: Any, *, write: bool = False) -> Path:
        calls.append(raw)
        raise mycode_core.paths.BoundaryError("second boundary call")

    monkeypatch.setattr(mycode_core.paths, "resolve_in_workspace", refuse)
    for module in ("read_file", "write_file", "edit_file", "glob_tool", "grep_tool"):
        target = f"mycode_builtin_tools.tools.{module}"
        monkeypatch.setattr(f"{target}.resolve_in_workspace", refuse, raising=False)
    return calls


def test_resolved_paths_are_not_resolved_again(
    workspace: Path, context: RunContext, no_boundary: list[Any]
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    tools = {tool.name: tool for tool in build_tools()}

    def call(name: str, **arguments: Any) -> ToolResult:
        result = tools[name].handler(arguments, context)
        assert isinstance(result, ToolResult)
        assert not result.is_error, (name, result.text())
        return result

    assert "two" in call("read_file", path=_bound(workspace, "a.txt", writable=False)).text()
    target = _bound(workspace, "a.txt", writable=True)
    call("edit_file", path=target, old_string="two", new_string="TWO")
    call("write_file", path=_bound(workspace, "b.txt", writable=True), content="b\n")
    listed = call("glob", pattern="*.txt", path=_bound(workspace, ".", writable=False)).text()
    assert "a.txt" in listed
    found = call("grep", pattern="TWO", path=_bound(workspace, ".", writable=False)).text()
    assert found.strip() == "a.txt"
    assert no_boundary == []
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_implementation_called_like_the_plugin_guide(workspace: Path, context: RunContext) -> None:
    (workspace / "n.txt").write_text("a\nb\nc\n")
    read_file = {tool.name: tool for tool in build_tools()}["read_file"]
    func = read_file.handler.__wrapped__  # type: ignore[attr-defined]
    result = func(context, _bound(workspace, "n.txt", writable=False), offset=2, limit=1)
    assert result.text().splitlines()[0] == "     2\tb"
    assert "read on with offset=3" in result.text()


def test_a_string_path_still_goes_through_the_boundary(context: RunContext) -> None:
    read_file = {tool.name: tool for tool in build_tools()}["read_file"]
    result = read_file.handler({"path": "../../etc/passwd"}, context)
    assert isinstance(result, ToolResult) and result.is_error
    assert "outside the workspace" in result.text()
