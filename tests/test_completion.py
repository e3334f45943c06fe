"""Issue 20 item 3: Tab completes `/` commands (plugins' included, with descriptions) and
`@path` (workspace files, .gitignore respected); `/help` lists every command; `/resume` with no
id opens a picker showing the user's own words, age and steps. On a real pty."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from mycode_core.cli.completion import PromptCompleter, workspace_files
from mycode_core.testing import cli_env, write_plugin_dist
from mycode_core.testing.terminal import Terminal

PLUGIN = """
from mycode_core import hookimpl
from mycode_core.records import SlashCommand


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="shipit", description="ship the current branch",
                          run=lambda args, ctx: "ship " + args))
"""


def _complete(completer: PromptCompleter, text: str) -> list[tuple[str, str]]:
    found = completer.get_completions(Document(text, len(text)), CompleteEvent())
    return [(c.text, c.display_meta_text) for c in found]


def _project(root: Path, git: bool) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "src" / "secret_build.log").write_text("noise\n")
    (root / "README.md").write_text("# hi\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_workspace_files_respect_gitignore(tmp_path: Path, git: bool) -> None:
    root = _project(tmp_path / "ws", git)
    files = workspace_files(root)
    assert "src/app.py" in files and "README.md" in files
    assert "src/secret_build.log" not in files and "build/out.py" not in files


def test_completer_offers_commands_with_descriptions_and_paths(tmp_path: Path) -> None:
    root = _project(tmp_path / "ws", git=False)
    completer = PromptCompleter(lambda: {"help": "this help", "shipit": "ship it"}, root)
    assert _complete(completer, "/sh") == [("/shipit", "ship it")]
    assert {text for text, _ in _complete(completer, "/")} == {"/help", "/shipit"}
    assert _complete(completer, "fix /sh") == []  # only at the start of the input
    assert [t for t, _ in _complete(completer, "look at @src/a")] == ["src/app.py"]
    assert "src/app.py" in [t for t, _ in _complete(completer, "see @app")]  # by name too
    assert _complete(completer, "mail me@src") == []  # not a mention


def _env(tmp_path: Path, site: Path) -> dict[str, str]:
    env = cli_env(tmp_path / "home", {"MYCODE_LOAD_PLUGINS": "shipit", "PYTHONPATH": str(site)})
    env.update(TERM="xterm", NO_COLOR="1")
    return env


def test_tab_help_and_resume_picker_on_a_pty(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "shipit", PLUGIN)
    root = _project(tmp_path / "ws", git=True)
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            [{"content": "first answer"}, {"content": "second answer"}, {"content": "third"}]
        )
    )
    argv = [sys.executable, "-m", "mycode_core", "--model", f"scripted:{script}"]
    argv += ["--cwd", str(root), "--trust"]
    env = _env(tmp_path, site)
    term = Terminal(argv, env, root)
    term.expect("/help for help")
    term.set_mark()
    term.type("/shi\t")
    term.expect("pit", after_mark=True)  # drawn with the line, or alone when Tab came later
    term.type(" fast\r")
    term.expect("first answer")  # the completed command ran (its prompt went to the model)
    term.type("/help\r")
    term.expect("ship the current branch")  # the plugin's command, with its description
    assert "/resume [ID]" in term.plain
    term.set_mark()
    term.type("explain @src/ap\t")
    # the completion's tail: drawn with the line ("@src/app.py") or, when the Tab is read after
    # the first draw, as "p.py" alone; the transcript below shows what was completed
    term.expect("p.py", after_mark=True)
    term.type("\r")
    term.expect("second answer")
    term.type("/exit\r")
    assert term.wait() == 0
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    users = [e for e in map(json.loads, transcript.read_text().splitlines()) if e["type"] == "user"]
    assert users[0]["content"] == "ship fast"
    assert '<mentioned-file path="src/app.py">' in users[1]["content"]

    term = Terminal(argv, env, root)
    term.expect("/help for help")
    term.type("/resume\r")
    term.expect("Resume which session?")
    term.expect("cancel")
    assert "1. /shipit fast · just now · 2 steps ·" in term.plain  # as typed
    assert "mentioned-file" not in term.plain  # the user's own words
    assert "1. 1." not in term.plain  # one number a row: the session's
    term.type("1")
    term.settle(0.5)
    assert "Resumed" not in term.plain  # a digit picks nothing yet: Enter does
    term.type("\r")
    term.expect("Resumed")
    term.type("/exit\r")
    assert term.wait() == 0
