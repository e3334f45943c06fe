"""SPEC §7 "Failure semantics": with ``MYCODE_STRICT_PLUGINS=1`` every plugin failure is exit 2.

Each case is a plugin file in ``$MYCODE_HOME/plugins`` that raises in one hook (or in a
start-up task); the same ``-p`` run exits as before without strict plugins, and 2 with them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mycode_core.testing import write_user_plugin
from mycode_core.testing.cli import CliResult, run_cli, write_script

HEADER = "from mycode_core import hookimpl\n\n"

PLUGINS = {
    "on_event": """
@hookimpl
def on_event(event, context):
    if event.type == "system":
        raise RuntimeError("observer broke")
""",
    "permission_verdict": """
@hookimpl(tryfirst=True)
def permission_verdict(call, tool, context):
    raise RuntimeError("permission policy broke")
""",
    "build_context": """
@hookimpl
def build_context(context):
    raise RuntimeError("context broke")
""",
    "view_message": """
@hookimpl
def view_message(message, budget, context):
    raise RuntimeError("shaper broke")
""",
    "session_start": """
@hookimpl
def session_start(source, context):
    raise RuntimeError("start broke")
""",
    "startup_tasks": """
def _task():
    raise RuntimeError("start-up task broke")

@hookimpl
def register_tools(register, context):
    context.startup_tasks.append(_task)
""",
}

READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}


def _run(tmp_path: Path, hook: str, strict: bool) -> tuple[int, str, list[str]]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "breaker", HEADER + PLUGINS[hook])
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("hello\n", "utf-8")
    model = write_script(tmp_path / "s.json", [READ, {"content": "done"}, {"content": "done"}])
    env = {"MYCODE_STRICT_PLUGINS": "1" if strict else None}
    args = ["-p", "read notes.txt", "--model", model, "--output-format", "stream-json"]
    run = run_cli(args, workspace, home, env)
    hooks = [e["hook"] for e in run.of_type("notice") if e.get("plugin") == "breaker"]
    assert "Traceback" not in run.stderr, run.stderr
    return run.rc, run.stderr, hooks


@pytest.mark.parametrize("hook", sorted(PLUGINS))
def test_a_failing_plugin_is_exit_2_only_with_strict_plugins(tmp_path: Path, hook: str) -> None:
    rc, stderr, hooks = _run(tmp_path / "lenient", hook, strict=False)
    assert rc == 0, stderr
    assert hook in hooks, (hooks, stderr)
    rc, stderr, hooks = _run(tmp_path / "strict", hook, strict=True)
    assert rc == 2, stderr
    assert hook in hooks, (hooks, stderr)


def _lenient_and_strict(tmp_path: Path, plugin: str, *args: str) -> tuple[CliResult, CliResult]:
    """``mycode ARGS --model SCRIPT`` with the plugin file ``breaker.py`` holding ``plugin``,
    without and then with ``MYCODE_STRICT_PLUGINS``."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "breaker", HEADER + plugin)
    workspace.mkdir()
    model = write_script(tmp_path / "s.json", [{"content": "done"}])
    argv = [*args, "--model", model]
    lenient = run_cli(argv, workspace, home)
    return lenient, run_cli(argv, workspace, home, {"MYCODE_STRICT_PLUGINS": "1"})


def test_a_failing_slash_command_is_exit_2_with_strict_plugins(tmp_path: Path) -> None:
    plugin = """from mycode_core.records import SlashCommand

def _boom(args, context):
    raise RuntimeError("command broke")

@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="boom", run=_boom))
"""
    lenient, strict = _lenient_and_strict(tmp_path, plugin, "-p", "/boom")
    assert lenient.rc == 0 and "command broke" in lenient.stdout + lenient.stderr
    assert strict.rc == 2, strict.stderr
    assert "Traceback" not in strict.stderr


@pytest.mark.parametrize("hook", ["register_agent_profiles", "register_skills"])
def test_a_hook_a_plugin_calls_itself_counts_too(tmp_path: Path, hook: str) -> None:
    """The subagents and skills plugins call these hooks through ``context.hook``; a failing
    implementation is their notice, and ``context.plugin_failed`` makes it count."""
    plugin = f"""
@hookimpl(optionalhook=True)
def {hook}(register, context):
    raise RuntimeError("contributor broke")
"""
    args = ("-p", "hi there", "--output-format", "stream-json")
    lenient, strict = _lenient_and_strict(tmp_path, plugin, *args)
    assert lenient.rc == 0, lenient.stderr
    assert any("contributor broke" in e["message"] for e in lenient.of_type("notice"))
    assert strict.rc == 2, strict.stderr
    assert "Traceback" not in strict.stderr


def test_a_failing_register_settings_is_exit_2_with_strict_plugins(tmp_path: Path) -> None:
    plugin = "@hookimpl\ndef register_settings(register):\n    raise RuntimeError('no')\n"
    lenient, strict = _lenient_and_strict(tmp_path, plugin, "-p", "hi", "--output-format", "json")
    assert lenient.rc == 0, lenient.stderr
    assert "plugin 'breaker' failed in register_settings" in lenient.stderr
    assert strict.rc == 2 and "failed in register_settings" in strict.stderr, strict.stderr
    assert "Traceback" not in strict.stderr
