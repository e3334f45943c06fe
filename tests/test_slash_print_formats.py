"""``mycode -p "/name"`` in ``json`` / ``stream-json``: the command's reply is the format's
``result`` (its ``final_text``), never raw text on stdout."""

from __future__ import annotations

import json
from pathlib import Path

from mycode_core.testing import write_user_plugin
from mycode_core.testing.cli import run_cli, write_script

VERSION_COMMAND = """
from mycode_core import hookimpl
from mycode_core.records import SlashCommand, SlashResult


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="version", run=lambda args, context: SlashResult(output="v 9.9")))
"""


def _run(tmp_path: Path, fmt: str) -> tuple[int, str]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "versioned", VERSION_COMMAND)
    workspace.mkdir(exist_ok=True)
    model = write_script(tmp_path / "s.json", [{"content": "the model was asked"}])
    run = run_cli(["-p", "/version", "--model", model, "--output-format", fmt], workspace, home)
    assert "Traceback" not in run.stderr, run.stderr
    return run.rc, run.stdout


def test_json_is_one_result_object_holding_the_reply(tmp_path: Path) -> None:
    rc, stdout = _run(tmp_path, "json")
    assert rc == 0, stdout
    (line,) = stdout.splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["stop_reason"] == "completed"
    assert result["final_text"] == "v 9.9" and result["steps"] == 0


def test_stream_json_is_events_from_system_to_result(tmp_path: Path) -> None:
    rc, stdout = _run(tmp_path, "stream-json")
    assert rc == 0, stdout
    events = [json.loads(line) for line in stdout.splitlines()]  # every line is JSON
    assert events[0]["type"] == "system" and events[-1]["type"] == "result"
    assert events[-1]["final_text"] == "v 9.9"
    assert [e for e in events if e["type"] == "result"] == [events[-1]]


def test_text_still_prints_the_reply(tmp_path: Path) -> None:
    rc, stdout = _run(tmp_path, "text")
    assert rc == 0 and stdout.strip() == "v 9.9"


def test_an_unknown_command_is_a_usage_error_naming_the_nearest(tmp_path: Path) -> None:
    """As in Claude Code's headless mode: ``/verison`` is not sent to the model as text."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "versioned", VERSION_COMMAND)
    workspace.mkdir()
    model = write_script(tmp_path / "s.json", [{"content": "the model was asked"}])
    run = run_cli(["-p", "/verison now", "--model", model], workspace, home)
    assert run.rc == 2 and "the model was asked" not in run.stdout
    assert "Unknown command /verison. Did you mean /version?" in run.stderr
    run = run_cli(["-p", "/compact", "--model", model], workspace, home)
    assert run.rc == 2 and "interactive session" in run.stderr
    run = run_cli(["-p", "/usr/bin/python3 crashes on start", "--model", model], workspace, home)
    assert run.rc == 0 and "the model was asked" in run.stdout  # a path is a prompt


def test_what_counts_as_a_command() -> None:
    """A name of letters, digits and ``-_.:`` after ``/``, ended by any whitespace; a path,
    a C comment piped in, ``//`` are prompts."""
    from mycode_core.cli.slash import split_command

    assert split_command("/review-pr\n12 and more") == ("review-pr", "12 and more")
    assert split_command("/hookify:help") == ("hookify:help", "")
    for prompt in ("/* a C file */ int x;", "/etc/hosts is empty", "//x", "/ x"):
        assert split_command(prompt) is None, prompt
