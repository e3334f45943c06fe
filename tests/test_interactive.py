"""The interactive session, driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mycode_core.testing import (
    cli_env,
    mycode_command,
    requires_plugin,
    run_cli,
    script_turn,
    write_script,
    write_user_plugin,
)
from mycode_core.testing.host import process_alive, wait_until
from mycode_core.testing.terminal import PROMPT_READS, Terminal

MYCODE = mycode_command()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path / "home", {"TERM": "xterm", "NO_COLOR": "1"})


def _script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    return write_script(tmp_path / "turns.json", turns)


def _session(
    tmp_path: Path, env: dict[str, str], turns: list[dict[str, object]], *flags: str
) -> tuple[Terminal, Path]:
    """An interactive session on a scripted model, in a fresh workspace, at its first prompt."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    model = _script(tmp_path, turns)
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace), *flags], env, workspace)
    term.expect("/help for help")
    return term, workspace


def test_turns_slash_commands_and_exit(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    answers = ["first answer", "second answer", "third answer"]
    model = _script(tmp_path, [{"content": answer} for answer in answers])
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.type("hello there\r")
    term.expect("first answer")
    term.type("/sessions\r")
    term.expect("hello there")  # the session of this workspace, by its first prompt
    term.type("/help\r")
    term.expect("/resume [ID]")
    term.type("/hlep\r")
    term.expect("Unknown command /hlep. Did you mean /help?")
    term.type("/etc/hosts again\r")  # a path, not a command: the model gets it
    term.expect("second answer")
    term.type("/tmp is full\r")  # an existing folder, named like a command: a path too
    term.expect("third answer")
    term.type("/exit\r")
    assert term.wait() == 0
    transcripts = list((tmp_path / "home" / "sessions").glob("*.jsonl"))
    assert len(transcripts) == 1
    users = [
        json.loads(line)["content"]
        for line in transcripts[0].read_text().splitlines()
        if json.loads(line)["type"] == "user"
    ]
    assert users == ["hello there", "/etc/hosts again", "/tmp is full"]
    assert not any(workspace.iterdir())  # nothing of ours in the workspace


def test_ctrl_c_cancels_the_turn_not_the_session(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = _script(tmp_path, [{"delay": 8, "content": "too slow"}, {"content": "still here"}])
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.expect("›")
    term.type("slow task\r")
    term.expect("thinking")
    time.sleep(0.5)
    term.type("queued line\r")
    term.expect("queued: queued line")
    term.type("\x03")
    term.expect("interrupted · ")
    term.expect("› queued line")  # not sent: back in the prompt
    term.type("\x15next task\r")  # Ctrl-U: cleared
    term.expect("still here", timeout=10)
    term.expect("completed")
    assert "too slow" not in term.output
    time.sleep(0.5)  # back at the prompt
    term.type("\x04")  # Ctrl-D leaves
    assert term.wait() == 0
    assert _users(tmp_path / "home") == ["slow task", "next task"]


def test_permission_prompt_allow_for_the_session(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    push = {"name": "run_command", "arguments": {"command": "git push origin main"}}
    model = _script(
        tmp_path, [{"tool_calls": [push]}, {"tool_calls": [push]}, {"content": "pushed twice"}]
    )
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("›")
    term.type("push it\r")
    term.expect("allow for this session")
    term.type("2")  # a number picks at once (arrow keys and Enter work too)
    term.expect("pushed twice")
    assert term.output.count("→ allow for this session") == 1  # answered once, not asked again
    term.type("/exit\r")
    assert term.wait() == 0
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    decisions = [
        (event["decision"], event.get("layer"))
        for event in map(json.loads, transcript.read_text().splitlines())
        if event["type"] == "permission"
    ]
    assert decisions[0] == ("allow", "session")
    assert decisions[1][0] == "allow"


def test_model_command_shows_and_switches_the_model(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = write_script(tmp_path / "first.json", [{"content": "from the first model"}] * 2)
    second = write_script(tmp_path / "second.json", [{"content": "from the second model"}])
    term = Terminal([*MYCODE, "--model", first, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.type("/model\r")
    term.expect(f"model: {first}")
    term.type("/model scripted:/no/such/script.json\r")
    term.expect("cannot switch to scripted:/no/such/script.json")
    term.type("hello\r")
    term.expect("from the first model")
    term.type(f"/model {second}\r")
    term.expect("for the rest of this session")
    term.type("again\r")
    term.expect("from the second model")
    term.type("/help\r")
    term.expect("/model [NAME]")
    term.type("/exit\r")
    assert term.wait() == 0


def test_mode_command_and_shift_tab_switch_the_permission_mode(
    tmp_path: Path, env: dict[str, str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}}
    model = _script(
        tmp_path,
        [
            {"tool_calls": [write]},
            {"content": "planned"},
            {"tool_calls": [write]},
            {"content": "ok"},
        ],
    )
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.type("/mode plan\r")
    term.expect("permission mode: plan (was default")
    term.expect("[plan] ›")
    term.type("write it\r")
    term.expect("planned")
    assert not (workspace / "a.txt").exists()  # plan mode refused the write
    term.type("/mode bypass\r")
    term.expect("start mycode with --permission-mode bypass")
    term.type("\x1b[Z")  # Shift+Tab: plan → default
    term.type("\x1b[Z")  # default → accept-edits
    term.expect("[accept-edits] ›")
    term.type("now write it\r")
    term.expect("ok")
    term.type("/mode\r")
    term.expect("permission mode: accept-edits")
    term.type("/exit\r")
    assert term.wait() == 0
    assert (workspace / "a.txt").read_text() == "hi\n"  # allowed without a question
    assert "allow for this session" not in term.output
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    decisions = [
        (event["decision"], event.get("rule"), event.get("layer"))
        for event in map(json.loads, transcript.read_text().splitlines())
        if event["type"] == "permission"
    ]
    assert decisions[0] == ("deny", "mode:plan", "session")
    assert decisions[1][0] == "allow"


def test_bang_runs_the_users_command_and_the_model_sees_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """``!cmd``: run in the workspace, shown, and given to the model with the next message."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("remember the milk\n")
    term, _workspace = _session(tmp_path, env, [{"content": "you ran cat"}])
    term.type("!cat notes.txt; exit 3\r")
    term.expect("remember the milk")
    term.expect("exit 3; the model sees it with your next message")
    term.type("what was that?\r")
    term.expect("you ran cat")
    term.type("/exit\r")
    assert term.wait() == 0
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    users = [
        event["content"]
        for event in map(json.loads, transcript.read_text().splitlines())
        if event["type"] == "user"
    ]
    assert len(users) == 1
    assert "<bash-input>cat notes.txt; exit 3</bash-input>" in users[0]
    assert "remember the milk" in users[0] and "exit code 3" in users[0]
    assert users[0].endswith("what was that?")


def test_status_and_permissions_commands(tmp_path: Path, env: dict[str, str]) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[permissions]\ndeny = ["run_command(rm:*)"]\n')
    term, _workspace = _session(tmp_path, env, [{"content": "hi"}], "--allow", "Bash(make:*)")
    model = f"scripted:{tmp_path / 'turns.json'}"
    term.type("/status\r")
    term.expect("mode         default (set by: default; /mode)")
    assert f"model        {model}" in term.output and "untrusted" in term.output
    term.type("/permissions\r")
    term.expect("allow  run_command(make:*)  (cli)")
    assert "deny   run_command(rm:*)  (user)" in term.output
    term.type("/exit\r")
    assert term.wait() == 0


def test_export_writes_the_session_page(tmp_path: Path, env: dict[str, str]) -> None:
    term, workspace = _session(tmp_path, env, [{"content": "the exported answer"}])
    term.type("a task to export\r")
    term.expect("the exported answer")
    term.type("/export\r")
    term.expect("wrote ")
    target = tmp_path / "mine.html"
    term.type(f"/export {target}\r")
    term.expect(f"wrote {target}")
    term.type("/exit\r")
    assert term.wait() == 0
    (page,) = (tmp_path / "home" / "exports").glob("*.html")
    for html in (page.read_text(), target.read_text()):
        assert html.startswith("<!DOCTYPE html>") or "<html" in html
        assert "a task to export" in html and "the exported answer" in html
    assert not any(p.suffix == ".html" for p in workspace.iterdir())  # nothing in the workspace


def _users(home: Path) -> list[str]:
    """The user messages of the one session transcript under ``home``."""
    transcript = next((home / "sessions").glob("*.jsonl"))
    events = map(json.loads, transcript.read_text().splitlines())
    return [event["content"] for event in events if event["type"] == "user"]


def test_esc_cancels_the_turn_and_keys_typed_meanwhile_wait_at_the_prompt(
    tmp_path: Path, env: dict[str, str]
) -> None:
    turns = [
        {"delay": 60, "content": "too slow"},
        {"delay": 60, "content": "slow again"},
        {"delay": 5, "content": "short wait"},
        {"content": "typed ahead answer"},
        {"content": "the last answer"},
    ]
    term, _workspace = _session(tmp_path, env, turns)
    term.type("slow task\r")
    term.expect("thinking")
    term.type("\x1b[Ahalf typed")  # an arrow key is not an Esc; the words are not echoed yet
    term.expect("typing: half typed")  # but the live view says they were kept
    term.type("\x1b")  # Esc alone: the turn stops, as with Ctrl-C
    term.expect("interrupted · ")
    term.expect("› half typed")  # back at the prompt, holding what was typed
    term.set_mark()
    term.type(" more\r")
    term.expect("thinking", after_mark=True)
    term.set_mark()
    term.type("queued one\rnot sent")  # Enter while a turn runs: queued...
    term.expect("queued: queued one · typing: not sent", after_mark=True)
    term.type("\x1b")  # ...but a cancel sends nothing: all of it waits in the prompt, to edit
    term.expect("interrupted", after_mark=True)
    term.expect("› queued one", after_mark=True)
    term.settle(1.0)
    assert "short wait" not in term.output  # nothing was sent
    term.type(" now\r")
    term.expect("thinking", after_mark=True)
    term.type("sent after it\r")  # a turn that ends by itself: the queued line is sent
    term.expect("short wait")
    term.expect("typed ahead answer")
    term.type("last\r")
    term.expect("the last answer")
    term.type("/exit\r")
    assert term.wait() == 0
    assert "too slow" not in term.output and "slow again" not in term.output
    assert "^[" not in term.plain  # nothing typed was echoed over the live view
    assert _users(tmp_path / "home") == [
        "slow task",
        "half typed more",
        "queued one\nnot sent now",
        "sent after it",
        "last",
    ]


def test_a_line_typed_during_a_turn_runs_after_it_on_a_dumb_terminal(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A dumb terminal's prompt ignores a prompt's default: the line typed ahead waited there,
    unseen, for another Enter (``/exit`` typed as a turn ended left the session open). After a
    cancelled turn the line is not sent but waits in the prompt: a line says so."""
    turns = [
        {"delay": 5, "content": "short wait"},
        {"content": "queued answer"},
        {"delay": 60, "content": "too slow"},
        {"content": "held answer"},
    ]
    term, _workspace = _session(tmp_path, {**env, "TERM": "dumb"}, turns)
    term.type("short task\r")
    assert wait_until(lambda: "short task" in _users(tmp_path / "home"), 60)
    term.type("queued one\r")  # the turn ends by itself: the line runs after it
    term.expect("queued answer")
    term.type("slow task\r")
    assert wait_until(lambda: "slow task" in _users(tmp_path / "home"), 60)
    term.type("held one\r")
    term.type("\x1b")  # Esc: the slow turn stops and the line waits, said since unseen
    term.expect("not sent, the turn was cancelled; in the prompt: held one")
    term.settle(1.0)
    assert "held answer" not in term.output
    term.type("\r")  # Enter sends what the prompt holds
    term.expect("held answer")
    term.type("/exit\r")
    assert term.wait() == 0
    assert _users(tmp_path / "home") == ["short task", "queued one", "slow task", "held one"]


@pytest.mark.parametrize(("key", "code"), [("\x03", 130), ("\x04", 0)])
def test_ctrl_c_or_ctrl_d_at_the_trust_question_leaves_and_records_nothing(
    tmp_path: Path, env: dict[str, str], key: str, code: int
) -> None:
    """Leaving at the one-time question is no answer: no session starts, "untrusted" is not
    recorded for good, and the question comes again next time."""
    workspace = tmp_path / "ws"
    (workspace / ".mycode").mkdir(parents=True)
    (workspace / ".mycode" / "config.toml").write_text('permission_mode = "accept-edits"\n')
    model = _script(tmp_path, [{"content": "hi"}])
    argv = [*MYCODE, "--model", model, "--cwd", str(workspace)]
    term = Terminal(argv, env, workspace)
    term.expect("Trust this folder?")
    term.type(key)
    assert term.wait() == code
    assert "/help for help" not in term.plain and "Traceback" not in term.plain
    assert "not recorded" in term.plain
    assert not (tmp_path / "home" / "trusted.json").exists()
    term = Terminal(argv, env, workspace)
    term.expect("Trust this folder?")  # asked again
    term.type("y\r")
    term.expect("[accept-edits] ›")  # the answer takes effect in this very session
    term.type("/exit\r")
    assert term.wait() == 0


def test_closing_the_terminal_while_a_command_runs_ends_it_with_129(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The window closes mid-command: the command's tree is gone, the turn is recorded as
    interrupted, and the exit is SIGHUP's 129 without a traceback from writing to the
    terminal that is gone."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pid_file = tmp_path / "grandchild.pid"
    command = f"sleep 300 & echo $! > {pid_file}; sleep 300"
    model = _script(tmp_path, [script_turn("run_command", command=command)])
    stderr = tmp_path / "stderr.txt"  # kept: the terminal itself goes away
    mycode = [*MYCODE, "--model", model, "--cwd", str(workspace), "--permission-mode", "bypass"]
    term = Terminal(["sh", "-c", 'exec "$@" 2>"$0"', str(stderr), *mycode], env, workspace)
    term.expect("›")  # the banner went to the file
    term.type("run it\r")
    assert wait_until(lambda: pid_file.is_file() and pid_file.read_text().strip(), 30)
    grandchild = int(pid_file.read_text())
    term.hang_up()
    assert term.wait() == 129
    assert "Traceback" not in stderr.read_text(), stderr.read_text()
    assert wait_until(lambda: not process_alive(grandchild), 30), "the command outlived mycode"
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    results = [
        e for e in map(json.loads, transcript.read_text().splitlines()) if e["type"] == "result"
    ]
    assert [r["stop_reason"] for r in results] == ["interrupted"]


NOTIFIED = """
import json, os
from mycode_core import hookimpl

@hookimpl
def notification(message, kind, context):
    with open(os.environ["QA_NOTIFIED"], "a") as out:
        out.write(json.dumps({"kind": kind, "message": message}) + "\\n")
"""


def test_the_prompt_left_idle_after_an_answer_notifies_once(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Claude Code's ``idle_prompt``: after an answer, a prompt nobody typed at for
    ``MYCODE_IDLE_NOTIFICATION_S`` calls the ``notification`` hook, once per wait; the first
    prompt of a session (nothing answered yet) does not."""
    notified = tmp_path / "notified.jsonl"
    (tmp_path / "home" / "plugins").mkdir(parents=True)
    (tmp_path / "home" / "plugins" / "notified.py").write_text(NOTIFIED)
    env = {**env, "MYCODE_IDLE_NOTIFICATION_S": "0.3", "QA_NOTIFIED": str(notified)}
    term, _ = _session(tmp_path, env, [{"content": "first answer"}, {"content": "second"}])
    time.sleep(1.0)
    assert not notified.exists()  # the first prompt: nothing answered yet
    term.type("hello\r")
    term.expect("first answer")
    assert wait_until(notified.exists, 30)
    time.sleep(1.0)
    lines = [json.loads(line) for line in notified.read_text().splitlines()]
    assert lines == [{"kind": "idle_prompt", "message": "mycode is waiting for your input"}]
    term.type("again\r")
    term.expect("second")
    assert wait_until(lambda: len(notified.read_text().splitlines()) == 2, 30)
    term.type("/exit\r")
    assert term.wait() == 0


def test_the_ctrl_c_exit_hint_expires_and_an_edit_disarms_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Ctrl-C at the empty prompt arms "press again to exit" for a while: a second press
    after it, or after typing and deleting a character, shows the hint again instead of
    leaving. (Each half sets a window that no machine's speed can cross the wrong way.)"""
    hint = "press Ctrl-C again"
    term, _workspace = _session(tmp_path, {**env, "MYCODE_EXIT_CONFIRM_S": "0.2"}, [])
    term.expect(PROMPT_READS)
    term.type("\x03")
    term.expect(hint)
    time.sleep(1.0)  # the window is over
    term.type("\x03")
    assert wait_until(lambda: (term.settle(0.1), term.plain.count(hint))[1] == 2, 30)
    term.type("/exit\r")
    assert term.wait() == 0
    term, _workspace = _session(tmp_path, {**env, "MYCODE_EXIT_CONFIRM_S": "600"}, [])
    term.expect(PROMPT_READS)
    term.type("\x03")
    term.expect(hint)
    term.type("a")
    term.settle(0.3)
    term.type("\x7f")  # typed and deleted: an edit disarms
    term.settle(0.3)
    term.type("\x03")
    assert wait_until(lambda: (term.settle(0.1), term.plain.count(hint))[1] == 2, 30)
    term.type("\x03")  # within the window: this one leaves
    assert term.wait() == 0


def test_the_exit_confirmation_keeps_its_window_on_the_clock_it_is_given() -> None:
    from mycode_core.cli.exit_confirm import WINDOW, ExitConfirmation

    now = [100.0]
    leaving = ExitConfirmation(clock=lambda: now[0])
    assert not leaving.press()
    now[0] += WINDOW - 0.1
    assert leaving.press()  # within the window: leave
    leaving = ExitConfirmation(clock=lambda: now[0])
    assert not leaving.press()
    now[0] += WINDOW + 0.1
    assert not leaving.press()  # expired: armed again, not left
    now[0] += 0.5
    leaving.disarm()  # an edit
    assert not leaving.press()
    now[0] += 0.5
    assert leaving.press()


GREET = """
from mycode_core import hookimpl
from mycode_core.records import SlashCommand


@hookimpl
def register_slash_commands(register, context):
    instructions = "Use the skill 'greet', loaded below for this turn, and follow it."
    register(SlashCommand(name="greet", run=lambda args, context: f"{args} {instructions}"))
"""


def _leave(term: Terminal) -> None:
    """``/exit``: the session leaves with 0."""
    term.type("/exit\r")
    assert term.wait() == 0


def _events(home: Path) -> list[dict[str, object]]:
    """The events of the oldest session transcript under ``home``."""
    transcript = sorted((home / "sessions").glob("*.jsonl"))[0]
    return [json.loads(line) for line in transcript.read_text().splitlines()]


@requires_plugin("checkpoints")
def test_lists_of_sessions_and_turns_show_what_the_user_typed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """``/sessions``, ``/resume`` and ``/rewind`` showed the prompt a command expanded to (a
    skill's instructions) and the note a ``!command`` became; they show the lines typed."""
    home = tmp_path / "home"
    write_user_plugin(home, "greet_command", GREET)
    turns = [{"content": "hello Marie"}, {"content": "you ran echo"}, {"content": "again"}]
    term, workspace = _session(tmp_path, env, turns)
    term.type("/greet Marie\r")
    term.expect("hello Marie")
    term.type("!echo hi there\r")
    term.expect("the model sees it with your next message")
    term.type("what was that?\r")
    term.expect("you ran echo")
    term.set_mark()
    term.type("/sessions\r")
    term.expect("/greet Marie", after_mark=True)
    term.type("/rewind\r")
    term.expect("1. /greet Marie · no files changed")
    term.expect("2. !echo hi there what was that? · no files changed")
    term.type("\x1b")
    term.expect("rewind cancelled")
    _leave(term)
    assert "Use the skill" not in term.plain and "I ran this command" not in term.plain
    listed = run_cli(["sessions"], workspace, home)
    assert "/greet Marie" in listed.stdout and "Use the skill" not in listed.stdout
    session = listed.stdout.split()[0]
    shown = run_cli(["sessions", "show", session], workspace, home)
    assert "/greet Marie" in shown.stdout and "Use the skill" not in shown.stdout
    term, _workspace = _session(tmp_path, env, turns)
    term.type("/resume\r")
    term.expect("1. /greet Marie · just now")
    term.type("1\r")
    term.expect("Resumed")  # after a recap of its turns, in the user's words too
    term.type("/exit\r")
    assert term.wait() == 0
    assert "Use the skill" not in term.plain and "I ran this command" not in term.plain
    assert "!echo hi there" in term.plain.split("Resume which session?")[-1]
    users = [e["content"] for e in _events(home) if e["type"] == "user"]
    assert users[0].startswith("Marie Use the skill")  # the model was sent the expansion


def test_the_note_of_keys_typed_during_a_turn() -> None:
    from mycode_core.cli.turn_keys import queued_note

    assert queued_note("") == ""
    assert queued_note("fix it\n") == " · queued: fix it"
    assert queued_note("one\ntwo\nhalf") == " · queued: one ⏎ two · typing: half"
    assert queued_note("x" * 100).endswith("x…") and len(queued_note("x" * 100)) < 80


def test_sessions_and_the_resume_picker_never_print_terminal_escapes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A stored first prompt holding OSC 52 (a clipboard write) and a C1 CSI is listed by
    ``/sessions`` and the ``/resume`` picker with its control characters as ``^[`` text."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    model = _script(tmp_path, [{"content": "ok"}, {"content": "again"}])
    evil = "hi \x1b]52;c;cHduZWQ=\x07 \x9b2J there"
    assert run_cli(["-p", evil, "--model", model], workspace, home).rc == 0
    term, _workspace = _session(tmp_path, env, [{"content": "fine"}])
    term.type("/sessions\r")
    term.expect("hi ^[]52;c;cHduZWQ=^G <U+009B>2J there")
    term.type("/resume\r")
    term.expect("1. hi ^[]52;c;cHduZWQ=^G <U+009B>2J there · just now")
    term.type("1\r")
    term.expect("Resumed")
    term.type("/exit\r")
    assert term.wait() == 0
    assert "\x1b]52" not in term.output and "\x07" not in term.output
    assert "\x9b" not in term.output
