"""``/skills`` and ``/skill NAME`` in a real interactive session (pseudo-terminal), with a
skill added while the session runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from skill_helpers import write_skill

from mycode_core.testing.terminal import Terminal


def _session(tmp_path: Path, answers: list[str], *flags: str) -> Terminal:
    """An interactive session on a pseudo-terminal, a scripted model answering ``answers``
    in turn; its home is ``tmp_path / "home"`` (skills go in its ``skills`` folder)."""
    workspace, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for path in (workspace, user):
        path.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env.update(MYCODE_HOME=str(home), HOME=str(user), TERM="xterm", NO_COLOR="1")
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"content": answer} for answer in answers]))
    argv = [sys.executable, "-m", "mycode_core", "--model", f"scripted:{script}"]
    flags = ("--cwd", str(workspace), "--completion-policy", "off", *flags)
    return Terminal([*argv, *flags], env, workspace)


def _help(term: Terminal) -> str:
    """What ``/help`` shows, once the session is ready."""
    term.expect("/help for help", timeout=60)
    term.set_mark()
    term.type("/help\r")
    term.expect("Ctrl-C cancels the running turn.", timeout=60, after_mark=True)
    return term.since_mark()


def _users(home: Path) -> list[str]:
    """The user messages of the session's transcript."""
    (transcript,) = (home / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [record["content"] for record in records if record["type"] == "user"]


def _leave(term: Terminal, home: Path) -> list[str]:
    """``/exit``, which leaves with 0, no skill having been an unknown command; the session's
    user messages."""
    term.type("/exit\r")
    assert term.wait(timeout=60) == 0
    assert "Unknown command" not in term.plain
    return _users(home)


def test_skills_in_an_interactive_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_skill(home / "skills", "early-bird", description="Present from the start.")
    wordy = "Says a great deal about itself, " * 6 + "and ends here."
    write_skill(home / "skills", "wordy", description=wordy)
    term = _session(tmp_path, ["answer one", "answer two"])
    term.expect("/help for help", timeout=60)
    term.type("/skills\r")
    term.expect("early-bird (user): Present from the start.", timeout=60)
    term.expect("to load one into the next turn", timeout=60)
    (line,) = [x for x in term.plain.splitlines() if x.startswith("wordy (user): ")]
    assert line.rstrip().endswith("…") and len(line.rstrip()) < 100  # one line of the terminal
    term.type("hello\r")
    term.expect("answer one", timeout=60)
    write_skill(home / "skills", "late-comer", description="Added mid-session.", body="LATE BODY\n")
    term.type("/skills\r")
    term.expect("late-comer (user): Added mid-session.", timeout=60)
    term.type("/skill late-comer use it now\r")
    term.expect("answer two", timeout=60)
    term.type("/exit\r")
    assert term.wait(timeout=60) == 0
    users = _users(home)
    assert users[0] == "hello"
    assert users[1].startswith("use it now") and "LATE BODY" in users[1]


def test_slash_skill_name_in_an_interactive_session(tmp_path: Path) -> None:
    """``/early-bird task`` loads the skill (not "Unknown command"); ``/status``, a built-in,
    stays the built-in though a skill has that name; ``/help`` lists each skill once."""
    home = tmp_path / "home"
    write_skill(home / "skills", "early-bird", description="Present from the start.", body="EB\n")
    write_skill(home / "skills", "status", description="A skill named like a built-in.")
    term = _session(tmp_path, ["answer one"])
    shown = _help(term)
    assert "Present from the start. (also /skill:early-bird)" in shown
    assert shown.count("skill:early-bird") == 1  # one line for the skill, not two
    assert "/skill:status" in shown  # /status is the built-in: the skill keeps its long name
    term.set_mark()
    term.type("/status\r")
    term.expect("workspace", timeout=60, after_mark=True)
    term.type("/early-bird check the app\r")
    term.expect("answer one", timeout=60)
    users = _leave(term, home)
    assert len(users) == 1 and users[0].startswith("check the app") and "EB" in users[0]


def test_help_lists_a_plugin_skill_once_with_all_its_names(tmp_path: Path) -> None:
    """A folder plugin's skill has three names (``/notes``, ``/skill:notes``, ``/kit:notes``);
    ``/help`` showed it on two lines."""
    plugin = tmp_path / "kit"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}')
    write_skill(plugin / "skills", "notes", description="Writes the release notes.")
    term = _session(tmp_path, ["answer one"], "--plugin-dir", str(plugin))
    shown = _help(term)
    assert "Writes the release notes. (also /skill:notes, /kit:notes)" in shown
    assert shown.count("Writes the release notes.") == 1
    term.type("/exit\r")
    assert term.wait(timeout=60) == 0


def test_a_skill_written_during_the_session_runs_as_slash_name(tmp_path: Path) -> None:
    """The commands were collected once: ``/greet Marie`` for a skill written mid-session said
    "Unknown command" and Tab did not know the name. An unknown name collects them again."""
    home = tmp_path / "home"
    term = _session(tmp_path, ["answer one", "answer two", "answer three"])
    term.expect("/help for help", timeout=60)
    term.type("hello\r")
    term.expect("answer one", timeout=60)
    write_skill(home / "skills", "greet", description="Greets someone.", body="GREET BODY\n")
    term.type("/greet Marie\r")
    term.expect("answer two", timeout=60)
    write_skill(home / "skills", "wave", description="Waves at someone.", body="WAVE BODY\n")
    term.settle(1.0)  # at the prompt (keys typed during a turn wait, Tab among them)
    term.set_mark()
    term.type("/wa\t")
    term.expect("/wave", timeout=60, after_mark=True)  # completed
    term.type(" at Bob\r")
    term.expect("answer three", timeout=60)
    users = _leave(term, home)
    assert users[1].startswith("Marie") and "GREET BODY" in users[1]
    assert users[2].startswith("at Bob") and "WAVE BODY" in users[2]
