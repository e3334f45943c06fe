"""SPEC §7 "Tool identity" (issue 18 item 2): a built-in tool is never replaced silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing.cli import CliResult, run_cli, write_plugin_dist, write_script

SHADOW = '''
from mycode_core import hookimpl, tool, ReadPath

@tool(read_only=True)
def read_file(path: ReadPath) -> str:
    """Read a file (the team's own reader)."""
    return "TEAM READER: " + path.read_text()

@hookimpl
def register_tools(register):
    register(read_file)
'''

HELLO = '''
from mycode_core import hookimpl, tool

@tool(read_only=True)
def hello() -> str:
    """Say hello."""
    return "hello from {name}"

@hookimpl
def register_tools(register):
    register(hello)
'''


@pytest.fixture
def setup(tmp_path: Path) -> Any:
    site = tmp_path / "site"
    write_plugin_dist(site, "teamread", SHADOW)
    workspace = tmp_path / "ws"
    (workspace / "secrets").mkdir(parents=True)
    (workspace / "secrets" / "key.txt").write_text("s3cret\n", "utf-8")
    (workspace / "notes.txt").write_text("plain notes\n", "utf-8")
    home = tmp_path / "home"
    home.mkdir()

    def run(args: list[str], config: str = "") -> CliResult:
        (home / "config.toml").write_text(config, "utf-8")
        return run_cli(args, cwd=workspace, home=home, pythonpath=[site])

    run.site = site  # type: ignore[attr-defined]
    run.tmp = tmp_path  # type: ignore[attr-defined]
    return run


def _tool(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (row,) = [row for row in rows if row["name"] == name]
    return row


def test_the_builtin_keeps_its_name_and_the_collision_names_both_plugins(setup: Any) -> None:
    listed = setup(["tools", "--json"])
    row = _tool(json.loads(listed.stdout), "read_file")
    assert (row["plugin"], row["shadowed"]) == ("builtin_tools", ["teamread"])
    assert "'builtin_tools'" in listed.stderr and "'teamread'" in listed.stderr
    text = setup(["tools"])
    assert "read_file: builtin_tools's tool is used; it shadows teamread's" in text.stdout
    check = setup(["plugins", "--check"])
    assert check.rc == 1
    assert "registered by both 'builtin_tools' and 'teamread'" in check.stdout + check.stderr


def test_replace_chooses_and_deny_rules_still_apply(setup: Any) -> None:
    config = '[tools]\nreplace = {read_file = "teamread"}\n'
    config += '[permissions]\ndeny = ["read_file(secrets/**)"]\n'
    row = _tool(json.loads(setup(["tools", "--json"], config).stdout), "read_file")
    assert (row["plugin"], row["shadowed"]) == ("teamread", ["builtin_tools"])
    check = setup(["plugins", "--check"], config)  # the user chose: no collision to report
    assert check.rc == 0 and "registered by both" not in check.stdout + check.stderr, check.stderr
    script = write_script(
        setup.tmp / "s.json",
        [
            {
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "secrets/key.txt"}, "id": "a"},
                    {"name": "read_file", "arguments": {"path": "notes.txt"}, "id": "b"},
                ]
            }
        ],
    )
    args = ["-p", "read", "--model", script, "--output-format", "stream-json"]
    result = setup(args, config)
    results = {e["id"]: e for e in result.events if e["type"] == "tool_result"}
    assert results["a"]["is_error"] and "s3cret" not in json.dumps(results["a"])
    assert "read_file(secrets/**)" in results["a"]["content"]
    assert "TEAM READER: plain notes" in json.dumps(results["b"]["content"])
    assert not [e for e in result.events if e["type"] == "notice" and "both" in e["message"]]


def test_a_run_names_the_right_plugin(setup: Any) -> None:
    script = write_script(setup.tmp / "s.json", [])
    result = setup(["-p", "hi", "--model", script, "--output-format", "stream-json"])
    notices = [e["message"] for e in result.events if e["type"] == "notice"]
    assert any("'teamread'" in m and "'builtin_tools' keeps it" in m for m in notices), notices


def test_two_plugins_with_one_name_is_a_load_error_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "alpha", HELLO.replace("{name}", "alpha"))
    write_plugin_dist(site, "beta", HELLO.replace("{name}", "beta"))
    (tmp_path / "ws").mkdir()
    check = run_cli(
        ["plugins", "--check"], cwd=tmp_path / "ws", home=tmp_path / "h", pythonpath=[site]
    )
    assert check.rc == 1
    output = check.stdout + check.stderr
    assert "'alpha'" in output and "'beta'" in output and "registered by both" in output
