"""A daily-use QA pass: what a user met in ordinary sessions, each with the run that showed it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mycode_core import testing as kit
from mycode_core.testing.terminal import PROMPT_READS, Terminal

MYCODE = kit.mycode_command()


def _interactive(workspace: Path, home: Path, model: str, keys: list[tuple[str, str]]) -> None:
    """Start mycode in ``workspace``; for each (wait-for, keys) wait, then type; it must exit 0."""
    env = kit.cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    for needle, typed in keys:
        term.expect(needle, after_mark=True)
        term.set_mark()
        term.type(typed)
    assert term.wait() == 0, term.plain[-2000:]


def test_a_session_without_a_prompt_is_not_kept_listed_or_continued(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    model = kit.write_script(
        tmp_path / "turns.json", [{"content": "hi back"}, {"content": "again"}]
    )
    _interactive(workspace, home, model, [(PROMPT_READS, "hello\r"), ("hi back", "/exit\r")])
    (first,) = [p.stem for p in (home / "sessions").glob("*.jsonl")]
    _interactive(workspace, home, model, [(PROMPT_READS, "\x04")])  # opened and left at once
    _interactive(
        workspace,
        home,
        model,
        [(PROMPT_READS, "/clear\r"), ("fresh conversation", "/exit\r")],
    )
    assert [p.stem for p in (home / "sessions").glob("*.jsonl")] == [first]
    # an empty transcript left by an older mycode (or a crash) is not listed or continued
    empty = home / "sessions" / "29990101-000000-abcdef.jsonl"
    system = {"type": "system", "cwd": str(workspace), "model": model, "ts": 4.1e9}
    empty.write_text(json.dumps(system) + "\n")
    listed = kit.run_cli(["sessions"], workspace, home)
    assert listed.rc == 0 and listed.stdout.splitlines()[0].startswith(first), listed.stdout
    assert empty.stem not in listed.stdout
    again = kit.run_cli(
        ["-c", "-p", "continue", "--model", model, "--output-format", "stream-json"],
        workspace,
        home,
    )
    assert again.rc == 0, again.stderr
    assert again.events[0]["resumed_from"] == first


SHIPIT = """
from mycode_core import hookimpl
from mycode_core.records import SlashCommand


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="shipit", run=lambda args, ctx: "ship " + args))
"""


@kit.requires_plugin("checkpoints")
def test_local_commands_in_print_mode_need_no_model(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    model = kit.write_script(
        tmp_path / "turns.json",
        [kit.script_turn("write_file", path="a.txt", content="hello\n"), {"content": "done"}],
    )
    first = kit.run_cli(
        ["-p", "write a.txt", "--model", model, "--permission-mode", "accept-edits"],
        workspace,
        home,
    )
    assert first.rc == 0 and (workspace / "a.txt").is_file(), first.stderr
    (session,) = [p.stem for p in (home / "sessions").glob("*.jsonl")]
    for args in (["-c", "-p", "/diff"], ["--resume", session, "-p", "/diff"]):
        shown = kit.run_cli(args, workspace, home)
        assert shown.rc == 0, shown.stderr
        assert "+hello" in shown.stdout and "+++ b/a.txt" in shown.stdout
    listed = kit.run_cli(["-c", "-p", "/checkpoints"], workspace, home)
    assert listed.rc == 0 and "a.txt" in listed.stdout, listed.stderr
    # a command that hands the model a prompt still needs one
    kit.write_user_plugin(home, "shipit", SHIPIT)
    ship = kit.run_cli(["-c", "-p", "/shipit now"], workspace, home)
    assert ship.rc == 2 and "no model configured" in ship.stderr, ship.stderr


def test_context_counts_the_tool_schemas_before_the_first_request(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    model = kit.write_script(tmp_path / "turns.json", [{"content": "hi back"}])
    env = kit.cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.expect(PROMPT_READS)
    term.set_mark()
    term.type("/context\r")
    term.expect("masked ~", after_mark=True)
    before = re.search(r"tools ~(\d+)", term.since_mark())
    term.type("hello\r")
    term.expect("hi back", after_mark=True)
    term.set_mark()
    term.type("/context\r")
    term.expect("masked ~", after_mark=True)
    after = re.search(r"tools ~(\d+)", term.since_mark())
    term.type("/exit\r")
    assert term.wait() == 0
    assert before is not None and after is not None, term.plain[-2000:]
    assert int(before.group(1)) > 100  # the schemas of every tool, not ~0
    assert int(before.group(1)) == int(after.group(1))  # the same tools, the same count
