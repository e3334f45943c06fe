"""``context.request``: what the user typed. A plugin's slash command counts as its command
line, not as the prompt it expanded to (the plugin author's text), so policies that read
what the user asked for (the completion gate) do not take a command's instructions for a
request of the user's."""

from __future__ import annotations

import json
from pathlib import Path

from mycode_core.testing import write_user_plugin
from mycode_core.testing.cli import run_cli, write_script

BRIEF_COMMAND = """
import json
from pathlib import Path

from mycode_core import hookimpl
from mycode_core.records import SlashCommand


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="brief", run=lambda args, context: "Summarise " + args + "."))


@hookimpl
def session_end(reason, context):
    said = {"prompt": context.prompt, "request": context.request}
    (Path(context.home) / "said.json").write_text(json.dumps(said))
"""


def _said(tmp_path: Path, prompt: str) -> dict[str, str]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "brief_command", BRIEF_COMMAND)
    workspace.mkdir(exist_ok=True)
    model = write_script(tmp_path / "s.json", [{"content": "summary"}])
    run = run_cli(["-p", prompt, "--model", model, "--completion-policy", "off"], workspace, home)
    assert run.rc == 0 and "Traceback" not in run.stderr, run.stderr
    said: dict[str, str] = json.loads((home / "said.json").read_text())
    return said


def test_a_slash_commands_request_is_the_line_typed(tmp_path: Path) -> None:
    said = _said(tmp_path, "/brief the parser")
    assert said == {"prompt": "Summarise the parser.", "request": "/brief the parser"}


def test_a_plain_prompt_is_its_own_request(tmp_path: Path) -> None:
    said = _said(tmp_path, "fix the parser")
    assert said == {"prompt": "fix the parser", "request": "fix the parser"}


def test_the_session_is_listed_by_the_command_line_typed(tmp_path: Path) -> None:
    """``mycode sessions`` showed the prompt the command expanded to; the transcript's
    ``typed`` event keeps the line typed, ahead of the ``user`` event the model was sent."""
    _said(tmp_path, "/brief the parser")
    home, workspace = tmp_path / "home", tmp_path / "ws"
    listed = run_cli(["sessions", "--json"], workspace, home)
    assert [s["prompt"] for s in json.loads(listed.stdout)] == ["/brief the parser"]
    (transcript,) = (home / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.index("typed") < kinds.index("user")
    assert events[kinds.index("typed")]["text"] == "/brief the parser"
    assert events[kinds.index("user")]["content"] == "Summarise the parser."
