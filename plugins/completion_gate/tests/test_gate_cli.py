"""Scripted sessions through the real CLI, one per gate path (tools run for real)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gate_helpers import FIX, READ, TESTS, guidance, make_project, run_cli, say, tool

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "team_policy"


def test_no_test_run_blocks_until_exhausted(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    events, code, _ = run_cli(ws, [READ, FIX, say("Fixed add().")], "Fix add in calc.py")
    messages = guidance(events)
    assert len(messages) == 3  # max_blocks, then the run gives up
    assert messages[0] == (
        "You changed calc.py but no test run passed after that change: run the tests "
        "(e.g. `python -m pytest -q`) and report the result."
    )
    result = events[-1]
    assert (result["stop_reason"], result["verdict"], code) == ("gate_exhausted", "fail", 1)


def test_no_test_run_then_tests_pass(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    turns = [READ, FIX, say("Fixed add()."), TESTS, say("Fixed add(); 1 test passed.")]
    events, code, _ = run_cli(ws, turns, "修复 calc.py 里的 add，然后跑一下测试")
    messages = guidance(events)
    assert len(messages) == 1
    assert messages[0].startswith('The user asked: "修复 calc.py 里的 add，然后跑一下测试". ')
    result = events[-1]
    assert (result["stop_reason"], result["verdict"], code) == ("completed", "pass", 0)


def test_tests_run_only_before_the_edit(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    turns = [TESTS, READ, FIX, say("Fixed."), TESTS, say("Fixed; the test passes now.")]
    events, code, _ = run_cli(ws, turns, "Fix the failing test")
    messages = guidance(events)
    assert len(messages) == 1
    assert "You changed calc.py after the last test run (`python -m pytest -q`)" in messages[0]
    assert events[-1]["verdict"] == "pass" and code == 0


def test_unfinished_todo(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    todos = [
        {"id": "1", "content": "Fix add", "status": "in_progress"},
        {"id": "2", "content": "Run the tests", "status": "pending"},
    ]
    done = [dict(item, status="completed") for item in todos]
    turns = [
        tool("todo_write", todos=todos),
        READ,
        FIX,
        TESTS,
        say("Done."),
        tool("todo_write", todos=done),
        say("Done: add fixed, tests pass."),
    ]
    events, code, _ = run_cli(ws, turns, "Fix add")
    messages = guidance(events)
    assert messages == [
        '2 todos are not completed: "Fix add" (in_progress); "Run the tests" (pending). '
        "Finish them, or update the todo list if they no longer apply."
    ]
    assert events[-1]["verdict"] == "pass" and code == 0


def test_lenient_on_the_command_line(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    turns = [READ, FIX, say("Fixed add().")]
    events, code, _ = run_cli(ws, turns, "Fix add", "--completion-policy", "lenient")
    assert guidance(events) == []
    assert events[-1]["verdict"] == "pass" and code == 0
    # lenient still holds the model to what the user asked for
    events, code, _ = run_cli(
        ws, turns, "Fix add and run the tests", "--completion-policy", "lenient"
    )
    assert len(guidance(events)) == 3 and code == 1


def test_off_in_the_project_config(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text('[completion_gate]\npolicy = "off"\n')
    todos = [{"id": "1", "content": "Fix add", "status": "pending"}]
    turns = [tool("todo_write", todos=todos), FIX, say("Fixed add().")]
    events, code, _ = run_cli(ws, turns, "Fix add and run the tests")
    assert guidance(events) == []
    assert events[-1]["verdict"] == "pass" and code == 0


@pytest.mark.parametrize(
    "prompt", ["Fix add and run the tests if possible", "修复 add，尽量跑一下测试"]
)
def test_if_possible_is_unverified(tmp_path: Path, prompt: str) -> None:
    ws = make_project(tmp_path)
    events, code, _ = run_cli(ws, [READ, FIX, say("Fixed add().")], prompt)
    assert guidance(events) == []
    result = events[-1]
    assert (result["stop_reason"], result["verdict"], code) == ("completed", "unverified", 0)


def _install_example(target: Path) -> None:
    """``pip install --no-deps --target`` the example (pip, else uv's pip)."""
    commands = []
    if shutil.which("pip"):
        commands.append(["pip", "install", "--no-deps", "--no-input", "--quiet"])
    if shutil.which("uv"):
        commands.append(["uv", "pip", "install", "--no-deps", "--quiet"])
    errors = []
    for command in commands:
        proc = subprocess.run(
            [*command, "--target", str(target), str(EXAMPLE)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode == 0:
            return
        errors.append(proc.stderr[-1000:])
    pytest.fail("could not install examples/team_policy: " + "\n".join(errors))


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_team_policy_installed_with_pip_replaces_the_default(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _install_example(site)
    assert (site / "mycode_team_policy" / "__init__.py").is_file()
    ws = make_project(tmp_path)
    (ws / "Makefile").write_text("check:\n\tpython -m pytest -q\n", encoding="utf-8")
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text('[completion_gate]\npolicy = "team_policy"\n')
    turns = [
        READ,
        FIX,
        TESTS,  # enough for the built-in standard policy, not for this team
        say("Fixed add(); the tests pass."),
        tool("run_command", command="make check"),
        say("Fixed add(); `make check` passed."),
    ]
    env = {"PYTHONPATH": str(site)}
    events, code, _ = run_cli(ws, turns, "Fix add", env=env)
    team = guidance(events, source="team_policy")
    assert team == [
        "Team policy: run `make check` after your last change (not run since). "
        "Team policy: say in your final answer whether `make check` passed."
    ]
    assert guidance(events) == []  # the built-in gate was not consulted
    assert events[-1]["verdict"] == "pass" and code == 0

    plugins = subprocess.run(
        [sys.executable, "-m", "mycode_core", "plugins"],
        capture_output=True,
        text=True,
        env={**run_env(tmp_path), "PYTHONPATH": str(site)},
        timeout=60,
    )
    assert '"team_policy"' in plugins.stdout

    # Not installed: the same configuration falls back to the built-in standard policy,
    # with a warning, and the pytest run is enough.
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    events, code, _ = run_cli(ws, turns[:4], "Fix add")
    assert guidance(events, source="team_policy") == []
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("'team_policy' is not provided by any installed plugin" in n for n in notices)
    assert events[-1]["verdict"] == "pass" and code == 0


def run_env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for a ``mycode`` subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYCODE_")}
    env["MYCODE_HOME"] = str(tmp_path / "home")
    return env


@pytest.mark.parametrize("fixed", [True, False])
def test_a_piped_test_run_is_judged_by_the_summary_it_printed(tmp_path: Path, fixed: bool) -> None:
    """``pytest -q 2>&1 | tail -3`` exits with ``tail``'s status: its output's summary (``1
    passed`` / ``1 failed``) tells whether the tests passed, not the exit code of the pipe."""
    ws = make_project(tmp_path)
    piped = tool("run_command", command="python -m pytest -q 2>&1 | tail -3")
    wrong = tool("edit_file", path="calc.py", old_string="a - b", new_string="b - a")
    turns = [READ, FIX if fixed else wrong, piped, say("Done.")]
    events, rc, stderr = run_cli(ws, turns, "Fix add", "--max-steps", "6")
    told = guidance(events)
    assert not any("exits with the status" in line for line in told)
    if fixed:
        assert rc == 0 and events[-1]["verdict"] == "pass", (told, stderr)
    else:
        assert rc == 1 and "failed: fix the failure" in told[0], (told, stderr)


@pytest.mark.parametrize(
    ("runner", "files"),
    [
        ("mix test", {"mix.exs": "", "lib/calc.ex": "x\n", "test/calc_test.exs": ""}),
        ("./mvnw -q test", {"pom.xml": "", "src/Calc.java": "x\n", "src/test/java/T.java": ""}),
        ("flutter test", {"pubspec.yaml": "flutter:\n", "lib/a.dart": "x\n", "test/t.dart": ""}),
    ],  # fmt: skip
)
def test_a_passing_run_of_another_ecosystems_runner_completes(
    tmp_path: Path, runner: str, files: dict[str, str]
) -> None:
    """An Elixir, Maven or Flutter project's own test runner proves its tests: the gate used to
    ask for `python -m pytest -q` after `mix test` passed, until the run ended gate_exhausted."""
    ws = tmp_path / "ws"
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("mix", "flutter", "mvnw"):
        (fake / name).write_text('#!/bin/sh\necho "3 tests, 0 failures"\n', encoding="utf-8")
        (fake / name).chmod(0o755)
    shutil.copy(fake / "mvnw", ws / "mvnw")
    changed = next(rel for rel, text in files.items() if text == "x\n")
    turns = [tool("read_file", path=changed), tool("write_file", path=changed, content="y\n")]
    turns += [say("Done."), tool("run_command", command=runner), say("Done; 3 tests pass.")]
    env = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    events, code, stderr = run_cli(ws, turns, "Change the code", env=env)
    told = guidance(events)
    assert len(told) == 1 and "run the tests (e.g. `" in told[0], told
    assert "pytest" not in told[0], told
    assert (events[-1]["verdict"], code) == ("pass", 0), (told, stderr)


@pytest.mark.parametrize(
    "prompt", ["Run the tests and tell me the result", "Set x to 2, run the tests"]
)
def test_tests_asked_for_in_a_project_without_tests(tmp_path: Path, prompt: str) -> None:
    """The gate asks once for the tests the user wanted; "there are none" then ends the run
    unverified (exit 0): it used to block until gate_exhausted, exit 1, whatever the model did."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n", encoding="utf-8")
    turns = [tool("read_file", path="app.py"), tool("write_file", path="app.py", content="x = 2\n")]
    turns += [say("Done."), tool("glob", pattern="**/*"), say("Done; the project has no tests.")]
    events, code, stderr = run_cli(ws, turns, prompt)
    told = guidance(events)
    assert len(told) == 1 and "no tests were found in the project" in told[0], told
    assert (events[-1]["stop_reason"], events[-1]["verdict"], code) == (
        "completed",
        "unverified",
        0,
    ), stderr


def test_a_check_asked_for_where_no_command_can_run_is_unverified(tmp_path: Path) -> None:
    """In plan mode (and in a read-only subagent such as ``explore``) no command can run: "run
    the tests" leaves the answer unverified at once; it used to end gate_exhausted, exit 1."""
    ws = make_project(tmp_path / "plan")
    plan = [say("Plan: fix add, then run pytest.")]
    events, code, stderr = run_cli(ws, plan, "Run the tests", "--permission-mode", "plan")
    assert guidance(events) == [], stderr
    assert (events[-1]["verdict"], code) == ("unverified", 0), stderr
    ws = make_project(tmp_path / "child")
    turns = [
        tool("delegate_task", task="Run the tests and report whether they pass", agent="explore"),
        say("I have only read tools: I cannot run the tests."),
        say("The explorer could not run them."),
    ]
    events, code, stderr = run_cli(ws, turns, "Ask an explorer about calc.py")
    result = next(e for e in events if e["type"] == "tool_result" and e["name"] == "delegate_task")
    assert result["metadata"]["subagent"]["verdict"] == "unverified", result["content"]
    assert not [e for e in events if e["type"] == "guidance" and e.get("agent_id")], stderr
    assert code == 0, stderr


def test_a_test_run_the_permissions_refuse_leaves_the_change_unverified(tmp_path: Path) -> None:
    """When the rules (or the user) do not let the tests run, asking for them again cannot
    help: the change is unverified (exit 0) and the gate says why. It used to block three
    times and end gate_exhausted, exit 1 — e.g. ``-p`` in an untrusted clone without a
    sandbox, where validation commands are denied."""
    ws = make_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    rule = '[permissions]\ndeny = ["run_command(python -m pytest:*)"]\n'
    (home / "config.toml").write_text(rule, encoding="utf-8")
    turns = [READ, FIX, TESTS, say("Fixed add(); the tests were not allowed to run.")]
    events, code, stderr = run_cli(ws, turns, "Fix add and run the tests")
    denied = [e for e in events if e["type"] == "tool_result" and e["name"] == "run_command"]
    assert denied and denied[0]["is_error"] and "denied" in denied[0]["content"].lower()
    assert guidance(events) == [], stderr
    assert (events[-1]["stop_reason"], events[-1]["verdict"], code) == (
        "completed",
        "unverified",
        0,
    )
