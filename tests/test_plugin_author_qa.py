"""What a QA engineer writing third-party plugins ran into: each test fails without its fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Optional

import pytest

from mycode_core import ReadPath, hookimpl, tool
from mycode_core.plugins import get_plugin_manager
from mycode_core.records import PermissionVerdict
from mycode_core.testing import installed_plugin, make_runner, run_events, tools_plugin
from mycode_core.testing.cli import run_cli, write_plugin_dist, write_script, write_user_plugin


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def test_a_null_for_an_optional_parameter_counts_as_not_given(tmp_path: Path) -> None:
    """The advertised schema of ``Optional[X]`` is X (small models read it better), and models
    send ``null`` for "not given": the core drops it instead of refusing the call. The
    ``tool_call`` event keeps what the model sent; a required parameter's null is refused."""
    seen: list[tuple[Any, Any]] = []

    @tool
    def qa_types(
        text: str,
        note: Annotated[Optional[str], "a note"] = None,  # noqa: UP045 (as authors write it)
        where: Optional[ReadPath] = None,  # noqa: UP045
    ) -> str:
        """Echo."""
        seen.append((note, where))
        return text

    calls = [
        {"id": "c1", "name": "qa_types", "arguments": {"text": "t", "note": None, "where": None}},
        {"id": "c2", "name": "read_file", "arguments": {"path": "a.txt", "offset": None}},
        {"id": "c3", "name": "qa_types", "arguments": {"text": None}},
    ]
    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        tools_plugin(qa_types),
        turns=[{"tool_calls": calls}, {"content": "done"}],
    )
    (tmp_path / "workspace" / "a.txt").write_text("alpha\n", "utf-8")
    events = run_events(runner)
    results = {r.id: r for r in _of(events, "tool_result")}
    assert not results["c1"].is_error, results["c1"].content
    assert seen == [(None, None)]
    assert not results["c2"].is_error and "alpha" in results["c2"].content
    assert results["c3"].is_error and "text: None is not of type 'string'" in results["c3"].content
    sent = {e.id: e.arguments for e in _of(events, "tool_call")}
    assert sent["c1"] == {"text": "t", "note": None, "where": None}


class _Lenient:
    """A policy that answers one call (its answers are traced like any hook's)."""

    @hookimpl(tryfirst=True)
    def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
        return PermissionVerdict(decision="allow", reason="fine by us") if call.id == "p1" else None


QA_TOOLS = """
from mycode_core import hookimpl


@hookimpl
def register_tools(register):
    pass
"""


def test_a_misspelt_plugin_selection_is_named_once(tmp_path: Path) -> None:
    """A name in ``MYCODE_LOAD_PLUGINS`` / ``MYCODE_DISABLE_PLUGINS`` that no installed plugin
    (entry point or plugin file, loaded or not) has costs one notice, with the nearest name."""
    site, home = tmp_path / "site", tmp_path / "home"
    write_plugin_dist(site, "qa_tools", QA_TOOLS)
    write_user_plugin(home, "qa_file", QA_TOOLS)
    env = {
        "MYCODE_LOAD_PLUGINS": "qa_tool,qa_tools,qa_file",
        "MYCODE_DISABLE_PLUGINS": "zz_unrelated,qa_file",
    }
    result = run_cli(["plugins"], tmp_path, home, env, pythonpath=[site])
    assert result.rc == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "no installed plugin" in line]
    assert lines == [
        "mycode: MYCODE_LOAD_PLUGINS: no installed plugin is named 'qa_tool' "
        "(did you mean 'qa_tools'?)",
        "mycode: MYCODE_DISABLE_PLUGINS: no installed plugin is named 'zz_unrelated'",
    ]
    right = run_cli(
        ["plugins"], tmp_path, home, {"MYCODE_LOAD_PLUGINS": "qa_tools"}, pythonpath=[site]
    )
    assert right.rc == 0 and "no installed plugin" not in right.stderr


def test_a_plugin_that_fails_to_import_is_listed_with_its_version(tmp_path: Path) -> None:
    """``mycode plugins`` shows the version of an installed plugin that failed to import, as
    ``mycode plugins --check`` does (from the distribution's metadata)."""
    site, home = tmp_path / "site", tmp_path / "home"
    write_plugin_dist(site, "qa_broken", "raise ImportError('no numpy')\n", version="1.2.3")
    env = {"MYCODE_LOAD_PLUGINS": "qa_broken"}
    for args in (["plugins"], ["plugins", "--check"]):
        result = run_cli(args, tmp_path, home, env, pythonpath=[site])
        rows = {row["name"]: row for row in json.loads(result.stdout)}
        assert rows["qa_broken"]["loaded"] is False, result.stdout
        assert rows["qa_broken"]["version"] == "1.2.3", args


class _Writes:
    """A stderr that records each write call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_each_trace_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MYCODE_TRACE_PLUGINS=1``: observer threads trace at once, so a line written in two
    parts (text, then newline) interleaves with another thread's; each is one write call."""
    monkeypatch.setenv("MYCODE_TRACE_PLUGINS", "1")
    pm = get_plugin_manager(load_entry_points=False, extra_plugins=[_Lenient()])
    stderr = _Writes()
    monkeypatch.setattr(sys, "stderr", stderr)
    pm.hook.permission_verdict(call=SimpleNamespace(id="p0"), tool=None, context=None)
    assert stderr.calls and all(call.count("\n") == 1 for call in stderr.calls), stderr.calls
    assert stderr.calls[0].startswith("[trace] permission_verdict -> ")


@pytest.mark.parametrize("how", ["env", "config"])
@pytest.mark.parametrize("prompt", ["hi", "hello there"])  # a word first loads plugin commands
def test_a_strict_load_failure_is_one_error_line(tmp_path: Path, how: str, prompt: str) -> None:
    """``MYCODE_STRICT_PLUGINS=1`` and ``[plugins] strict = true`` stop a run whose plugin fails
    to load the same way: one ``mycode: error:`` line, exit 2 (no warning first, no click
    ``Error:``)."""
    site, home = tmp_path / "site", tmp_path / "home"
    write_plugin_dist(site, "qa_broken", "raise ImportError('no numpy')\n")
    home.mkdir()
    env = {"MYCODE_LOAD_PLUGINS": "qa_broken"}
    if how == "env":
        env["MYCODE_STRICT_PLUGINS"] = "1"
    else:
        (home / "config.toml").write_text("[plugins]\nstrict = true\n", "utf-8")
    model = write_script(tmp_path / "s.json", [{"content": "hi"}])
    result = run_cli(["-p", prompt, "--model", model], tmp_path, home, env, pythonpath=[site])
    assert result.rc == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("mycode: error: plugin 'qa_broken' (distribution "), line
    assert "strict" in line and "MYCODE_DISABLE_PLUGINS=qa_broken" in line
