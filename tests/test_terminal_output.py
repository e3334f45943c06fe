"""What a person sees: diffs under edits, rendered markdown, error lines, plurals, recaps, and a
readable view on narrow, dumb, non-UTF-8 or absent terminals."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mycode_core.cli.richtext import (
    EncodingSafeFile,
    MarkdownStream,
    diff_lines,
    plural,
    result_line,
)
from mycode_core.testing import mycode_command, requires_plugin, run_cli, write_script
from mycode_core.testing.terminal import Terminal

MYCODE = mycode_command()
needs_builtin_tools = requires_plugin("builtin_tools")
EDIT = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "calc.py",
                    "old_string": "return a - b",
                    "new_string": "return a + b",
                },
            }
        ]
    },
    {"content": "Fixed **add**: it now adds.\n\n- one change\n- in `calc.py`"},
]


def _project(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    return workspace


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env.update(MYCODE_HOME=str(tmp_path / "home"), MYCODE_LOAD_PLUGINS="builtin_tools")
    env.update(extra)
    return env


def test_result_line_shows_the_error_line_of_a_failed_command() -> None:
    output = "collecting\nE   AssertionError: 3 != 4\n1 failed in 0.1s\nsome trailer\nexit code: 1"
    assert result_line(output, {"exit_code": 1}) == "1 failed in 0.1s  (exit 1)"
    output = "building\nsrc/x.c:3: error: missing ;\nmake: leaving directory\nexit code: 2"
    assert result_line(output, {"exit_code": 2}).startswith("make: leaving directory") is False
    assert "error: missing ;" in result_line(output, {"exit_code": 2})
    assert result_line("all good\nexit code: 0", {"exit_code": 0}) == "all good"
    assert result_line("x\nInterrupted by the user: ...", {"exit_code": 130, "interrupted": True})
    assert result_line("first\nsecond", {}) == "first"


def test_plurals() -> None:
    assert plural(1, "step") == "1 step"
    assert plural(0, "step") == "0 steps"
    assert plural(2, "line") == "2 lines"


def test_diff_lines_colour_and_collapse() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n" + "\n".join(
        f"-old {i}\n+new {i}" for i in range(9)
    )
    lines = diff_lines(diff, shown=5)
    assert lines[0] == ("cyan", "@@ -1,3 +1,3 @@")
    assert lines[1] == ("red", "-old 0") and lines[2] == ("green", "+new 0")
    assert len(lines) == 6 and lines[-1] == ("dim", "… 14 more lines")


def test_markdown_is_rendered_block_by_block() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=40, force_terminal=False, color_system=None)
    stream = MarkdownStream(console)
    for piece in ["Some **bold** wor", "ds here.\n\n", "```py\nx = 1\n\n", "y = 2\n```\n", "end"]:
        stream.feed(piece)
    assert "bold" in buffer.getvalue() and "**" not in buffer.getvalue()
    assert "y = 2" not in buffer.getvalue()  # the fence is still open: not printed yet
    stream.flush()
    text = buffer.getvalue()
    assert "x = 1" in text and "y = 2" in text and text.rstrip().endswith("end")


def test_markdown_wraps_at_word_boundaries() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=20, color_system=None)
    stream = MarkdownStream(console)
    stream.feed("alphabet soup is a dish with letters floating around\n\n")
    lines = [line.rstrip() for line in buffer.getvalue().splitlines() if line.strip()]
    words = "alphabet soup is a dish with letters floating around".split()
    assert all(word in words for line in lines for word in line.split())


def test_encoding_safe_file_never_fails() -> None:
    raw = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    safe = EncodingSafeFile(raw)
    safe.write("● run ✗ done … → ünïcode\n")
    raw.flush()
    assert raw.buffer.getvalue().decode("ascii") == "* run x done ... -> ?n?code\n"  # type: ignore[attr-defined]


@needs_builtin_tools
def test_an_edit_shows_its_diff_and_the_summary_is_singular(tmp_path: Path) -> None:
    workspace = _project(tmp_path)
    model = write_script(tmp_path / "turns.json", [*EDIT[:2], {"content": "done"}])
    run = run_cli(
        ["-p", "fix", "--model", model, "--permission-mode", "accept-edits"],
        workspace,
        tmp_path / "home",
        {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
    )
    assert run.rc == 0, run.stderr
    assert "-    return a - b" in run.stderr and "+    return a + b" in run.stderr
    assert "· 3 steps ·" in run.stderr
    one = write_script(tmp_path / "one.json", [{"content": "hello"}])
    single = run_cli(["-p", "hi", "--model", one], workspace, tmp_path / "home", {})
    assert "· 1 step ·" in single.stderr


@needs_builtin_tools
def test_an_image_result_shows_its_text_never_its_data(tmp_path: Path) -> None:
    workspace = _project(tmp_path)
    (workspace / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "shot.png"}}]}
    model = write_script(tmp_path / "turns.json", [read, {"content": "noise"}])
    run = run_cli(["-p", "look", "--model", model], workspace, tmp_path / "home",
                  {"MYCODE_LOAD_PLUGINS": "builtin_tools"})  # fmt: skip
    assert run.rc == 0, run.stderr
    line = next(line for line in run.stderr.splitlines() if "shot.png: image/png" in line)
    assert "10,248 bytes (+1 line)" in line and "mime_type" not in run.stderr


@needs_builtin_tools
def test_the_diff_is_in_the_result_metadata_of_edits_and_writes(tmp_path: Path) -> None:
    workspace = _project(tmp_path)
    write = {"name": "write_file", "arguments": {"path": "new.py", "content": "x = 1\n"}}
    model = write_script(tmp_path / "turns.json", [*EDIT[:2], {"tool_calls": [write]}])
    run = run_cli(
        ["-p", "fix", "--model", model, "--permission-mode", "accept-edits"]
        + ["--output-format", "stream-json"],
        workspace,
        tmp_path / "home",
        {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
    )
    diffs = [e["metadata"].get("diff", "") for e in run.events if e["type"] == "tool_result"]
    assert "+    return a + b" in diffs[1]
    assert "+x = 1" in diffs[2]


@needs_builtin_tools
@pytest.mark.parametrize(
    ("columns", "term"), [(30, "xterm"), (100, "dumb")], ids=["narrow", "dumb"]
)
def test_interactive_on_a_narrow_or_dumb_terminal(tmp_path: Path, columns: int, term: str) -> None:
    workspace = _project(tmp_path)
    push = {"tool_calls": [{"name": "run_command", "arguments": {"command": "git push"}}]}
    model = write_script(tmp_path / "turns.json", [*EDIT[:2], push, EDIT[2]])
    argv = [*MYCODE, "--model", model, "--cwd", str(workspace)]
    terminal = Terminal(argv, _env(tmp_path, TERM=term), workspace, columns=columns)
    try:
        terminal.expect("/help")
        terminal.type("fix add\r")
        terminal.expect("allow once")  # git push asks
        terminal.type("3\r" if term == "dumb" else "3")
        terminal.expect("completed")
        assert "Traceback" not in terminal.plain
        assert "+    return a + b" in terminal.plain
        assert "**add**" not in terminal.plain or term == "dumb"  # rendered unless dumb
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()


def test_a_non_utf8_locale_and_no_terminal_give_readable_output(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = write_script(tmp_path / "turns.json", [{"content": "naïve → answer"}])
    env = _env(tmp_path, LC_ALL="C", LANG="C", PYTHONIOENCODING="ascii", MYCODE_LOAD_PLUGINS="")
    done = subprocess.run(
        [*MYCODE, "-p", "task", "--model", model],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"completed - verdict pass - 1 step" in done.stderr
    assert done.stdout.strip() == b"na?ve -> answer"


def test_continue_prints_a_recap_and_a_bad_resume_names_the_id(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    first = write_script(tmp_path / "a.json", [{"content": "The first answer."}])
    run_cli(["-p", "remember the number 7", "--model", first], workspace, home, {})
    again = write_script(tmp_path / "b.json", [{"content": "again"}])
    run = run_cli(["-p", "more", "--continue", "--model", again], workspace, home, {})
    assert run.rc == 0
    assert "Resuming session" in run.stderr
    assert "remember the number 7 → completed" in run.stderr
    assert "last answer: The first answer." in run.stderr
    bad = run_cli(["-p", "x", "--resume", "NOPE-123", "--model", again], workspace, home, {})
    assert bad.rc == 2 and "'NOPE-123'" in bad.stderr


def test_slash_resume_with_a_bad_id_names_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = write_script(tmp_path / "turns.json", [{"content": "hi"}])
    env = _env(tmp_path, MYCODE_LOAD_PLUGINS="")
    terminal = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    try:
        terminal.expect("/help")
        terminal.type("/resume NOT-A-SESSION\r")
        terminal.expect("No session 'NOT-A-SESSION'")
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()


def test_subcommand_help_has_no_rest_markup(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mycode_core.cli.main import build_cli

    cli = build_cli()
    runner = CliRunner()

    def walk(group: Any, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, command in getattr(group, "commands", {}).items():
            found += walk(command, [*path, name])
        return found

    for path in walk(cli, []):
        result = runner.invoke(cli, [*path, "--help"], env={"MYCODE_HOME": str(tmp_path)})
        assert "``" not in result.output, (path, result.output)
        assert ":param" not in result.output, path


def test_stream_json_is_unaffected_by_terminal_settings(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = write_script(tmp_path / "turns.json", [{"content": "**x**"}])
    run = run_cli(
        ["-p", "t", "--model", model, "--output-format", "stream-json"],
        workspace,
        tmp_path / "home",
        {"TERM": "dumb", "COLUMNS": "20"},
    )
    assert json.loads(run.stdout.splitlines()[-1])["final_text"] == "**x**"


def test_huge_tool_arguments_are_elided_in_the_terminal_only(tmp_path: Path) -> None:
    """A 1 MB one-line write_file shows a bounded line (head + "… N more characters") in the
    terminal view; the stream-json events keep the whole arguments."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    big = "x" * 1_000_000
    call = {"name": "write_file", "arguments": {"path": "big.txt", "content": big}}
    turns = [{"tool_calls": [call]}, {"content": "done"}]
    text = run_cli(
        ["-p", "write", "--model", write_script(tmp_path / "a.json", turns)],
        cwd=workspace,
        home=home,
    )
    assert text.rc == 0, text.stderr[-500:]
    assert (workspace / "big.txt").stat().st_size == 1_000_000
    shown = text.stdout + text.stderr
    assert len(shown) < 5_000, len(shown)
    assert "more characters" in shown and "x" * 100 in shown
    (workspace / "big.txt").unlink()
    stream = run_cli(
        ["-p", "write", "--model", write_script(tmp_path / "b.json", turns)]
        + ["--output-format", "stream-json"],
        cwd=workspace,
        home=home,
    )
    calls = stream.of_type("tool_call")
    assert calls and calls[0]["arguments"]["content"] == big


LAZY_RICH = """
import sys
from mycode_core.cli.output import TextRenderer
from mycode_core.events import StepStartEvent, SystemEvent, ToolCallEvent
renderer = TextRenderer()
renderer.handle(SystemEvent(session_id="s", model="m", cwd=".", tools=[], plugins=[]))
renderer.handle(StepStartEvent(step=1))
print("before the first reply:", "rich" in sys.modules, flush=True)
renderer.handle(ToolCallEvent(id="c1", name="read_file", arguments={"path": "a.py"}))
print("after a tool call:", "rich" in sys.modules, flush=True)
"""


def test_text_output_into_pipes_imports_rich_only_to_show_something(tmp_path: Path) -> None:
    """Piped (a script, CI), nothing is shown before the first model reply: rich, tens of ms to
    import, stays out of the time to the first request."""
    done = subprocess.run(
        [sys.executable, "-c", LAZY_RICH],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in ("FORCE_TERMINAL", "TTY_COMPATIBLE")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before the first reply: False", "after a tool call: True"]
    assert "read_file(a.py)" in done.stderr  # the live view goes to stderr when piped


def test_the_spinner_shows_progress_and_never_reads_markup() -> None:
    """A long MCP call's progress events update the spinner on a terminal; a subagent's call
    whose arguments hold ``[/x]`` (a regex, a path) is shown as it is, not parsed as rich markup
    (which raised and ended the turn's view)."""
    from mycode_core.cli.output import TextRenderer
    from mycode_core.events import ProgressEvent, ToolCallEvent

    renderer = TextRenderer()
    screen = io.StringIO()
    renderer._console = Console(file=screen, force_terminal=True, width=120)
    pattern = {"pattern": "[/x] [bold]"}
    renderer.handle(ToolCallEvent(id="c1", name="grep", arguments=pattern, agent_id="a1"))
    renderer.close()  # the spinner's last frame is drawn as it stops
    assert "[/x] [bold]" in screen.getvalue()
    renderer.handle(
        ProgressEvent(source="mcp__srv__build", message="step\nthree", progress=3, total=10)
    )
    renderer.close()
    assert "running mcp__srv__build… step three (3/10)" in screen.getvalue()


def test_a_retry_says_the_status_and_the_servers_words_on_one_line(tmp_path: Path) -> None:
    """``retry 1 in 1.1s: server_error`` alone did not say what the server answered."""
    workspace = _project(tmp_path)
    page = "HTTP 502: <html>\n<head><title>502 Bad Gateway</title></head>\n<body>" + "x" * 400
    error = {"error": {"kind": "server_error", "message": page, "retry_after": 0.1}}
    model = write_script(tmp_path / "turns.json", [error, {"content": "back again"}])
    run = run_cli(["-p", "hi", "--model", model], workspace, tmp_path / "home", {})
    assert run.rc == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("retry 1 in ")]
    assert "server_error — HTTP 502: 502 Bad Gateway" in line
    assert line.endswith("…") and len(line) < 220 and "<" not in line


def test_retry_text_and_line_count() -> None:
    from mycode_core.cli.richtext import line_count, retry_text

    assert retry_text(2, 1.25, "timeout", "") == "retry 2 in 1.2s: timeout"
    assert retry_text(1, 3, "rate_limit", "HTTP 429: slow down") == (
        "retry 1 in 3.0s: rate_limit — HTTP 429: slow down"
    )
    assert line_count("") == 0 and line_count("a\nb") == 2
    cut = (
        "1\n2\n\n… [99 lines (300 bytes) elided; full output: /x.log — read …] …\n102\nexit code: 0"
    )
    assert line_count(cut) == 2 + 1 + 99 + 2  # the marker's line stands for what it left out


@needs_builtin_tools
def test_a_long_command_output_shows_the_lines_it_printed(tmp_path: Path) -> None:
    """``seq 1 200000`` showed ``200000 (+4365 lines)``: the lines the model was shown."""
    workspace = _project(tmp_path)
    call = {"name": "run_command", "arguments": {"command": "seq 1 200000"}}
    model = write_script(tmp_path / "turns.json", [{"tool_calls": [call]}, {"content": "ok"}])
    flags = ["--model", model, "--permission-mode", "bypass"]
    run = run_cli(["-p", "count", *flags], workspace, tmp_path / "home", _env(tmp_path))
    assert run.rc == 0, run.stderr
    assert "⎿ 200000 (+200000 lines)" in run.stderr  # 200,000 and the exit code's line


def _stdout_to(tmp_path: Path, stdout: Any, fmt: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start ``mycode -p hi`` (scripted) writing its output to ``stdout``."""
    from mycode_core.testing import cli_env

    home, work = tmp_path / "home", tmp_path / "ws"
    work.mkdir()
    model = write_script(tmp_path / "s.json", [{"content": "the answer"}])
    args = ["-p", "hi", "--model", model, "--output-format", fmt]
    env = cli_env(home, {"MYCODE_LOAD_PLUGINS": ""})
    process = subprocess.Popen(
        [*MYCODE, *args],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
    )
    return process, home


def _transcript_types(home: Path) -> list[str]:
    (path,) = (home / "sessions").glob("*.jsonl")
    return [json.loads(line)["type"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_a_failed_stdout_write_is_one_line_and_exit_1(tmp_path: Path, fmt: str) -> None:
    with open("/dev/full", "wb") as full:
        process, home = _stdout_to(tmp_path, full, fmt)
        _, stderr = process.communicate(timeout=120)
    text = stderr.decode()
    assert process.returncode == 1, text
    assert "Traceback" not in text
    (line,) = [line for line in text.splitlines() if "No space left" in line]
    assert line.startswith("mycode: error: cannot write the output") and "sessions show" in line
    assert _transcript_types(home)[-1] == "result"  # the transcript is complete


@pytest.mark.parametrize("fmt", ["text", "stream-json"])
def test_a_closed_pipe_ends_the_run_quietly(tmp_path: Path, fmt: str) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line (as `| head -c1` after it)
    try:
        process, home = _stdout_to(tmp_path, write_end, fmt)
    finally:
        os.close(write_end)
    _, stderr = process.communicate(timeout=120)
    text = stderr.decode()
    assert process.returncode == 1, text
    assert "Traceback" not in text and "Broken pipe" not in text and "Error" not in text
    assert _transcript_types(home)[-1] == "result"


def test_the_spinner_counts_the_seconds_of_a_long_step_and_shows_a_commands_last_line() -> None:
    """A build or test run that takes minutes shows how long it has run and what it printed
    last (``run_command``'s ``progress``), as Claude Code and Codex do; a quick step shows no
    clock."""
    from mycode_core.cli.output import TextRenderer
    from mycode_core.cli.spinner import SpinnerWords, elapsed_text
    from mycode_core.events import ProgressEvent, ToolCallEvent

    assert (elapsed_text(5.9), elapsed_text(125)) == ("5s", "2m 05s")
    console = Console(file=io.StringIO(), width=100)
    long_ago = time.monotonic() - 65
    for words, expected in [
        (
            SpinnerWords("running run_command… built 3/9", long_ago, " · typed: ls"),
            "running run_command… built 3/9 (1m 05s) · typed: ls",
        ),
        (SpinnerWords("thinking…", time.monotonic()), "thinking…"),
    ]:
        with console.capture() as captured:
            console.print(words)
        assert captured.get().strip() == expected
    renderer = TextRenderer()
    screen = io.StringIO()
    renderer._console = Console(file=screen, force_terminal=True, width=120)
    renderer.handle(ToolCallEvent(id="c1", name="run_command", arguments={"command": "make"}))
    renderer.handle(ProgressEvent(source="run_command", message="[cc] compiling [/x]"))
    renderer.close()
    assert "running run_command… [cc] compiling [/x]" in screen.getvalue()
