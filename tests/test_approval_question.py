"""What an approval question shows: the change itself (a diff, a new file's content) and the
policy's reason whole, before the user answers."""

from __future__ import annotations

from pathlib import Path

from mycode_core.cli.approval_preview import approval_preview
from mycode_core.records import ToolCall
from mycode_core.runtime.arguments import short_reason
from mycode_core.testing import cli_env, mycode_command, write_script
from mycode_core.testing.terminal import Terminal


def test_the_reason_keeps_its_own_parentheses() -> None:
    call = ToolCall(id="c", name="run_command", arguments={"command": "rm notes.txt"})
    reason = (
        "run_command 'echo (a) && rm notes.txt' (deletes notes.txt in the workspace (not a "
        "build or cache folder)) needs your approval. To allow it, add …"
    )
    assert short_reason(reason, call) == (
        "deletes notes.txt in the workspace (not a build or cache folder)"
    )
    assert short_reason("run_command is marked high-risk needs your approval", call) == (
        "run_command is marked high-risk"
    )


def test_previews_of_an_edit_a_new_file_and_a_rewrite(tmp_path: Path) -> None:
    existing = tmp_path / "app.py"
    existing.write_text("a = 1\nb = 2\nc = 3\n")
    edit = ToolCall(
        id="e", name="edit_file", arguments={"path": "app.py", "old_string": "b = 2",
                                             "new_string": "b = 20"},
        paths={"path": existing},
    )  # fmt: skip
    assert "-b = 2" in approval_preview(edit) and "+b = 20" in approval_preview(edit)
    new = ToolCall(
        id="w", name="write_file", arguments={"path": "new.py", "content": "x = 1\n"},
        paths={"path": tmp_path / "new.py"},
    )  # fmt: skip
    assert approval_preview(new) == ["+x = 1"]
    rewrite = ToolCall(
        id="r", name="write_file", arguments={"path": "app.py", "content": "a = 1\nc = 3\n"},
        paths={"path": existing},
    )  # fmt: skip
    assert "-b = 2" in approval_preview(rewrite) and "+a = 1" not in approval_preview(rewrite)
    huge = ToolCall(
        id="h", name="write_file", arguments={"path": "big.txt", "content": "x\n" * 500},
        paths={"path": tmp_path / "big.txt"},
    )  # fmt: skip
    assert approval_preview(huge)[-1] == "… 460 more lines"
    assert approval_preview(ToolCall(id="q", name="run_command")) == []


def test_the_question_shows_the_diff_before_the_answer(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[permissions]\nask = ["edit_file"]\n')
    (workspace / "settings.py").write_text("DEBUG = False\nHOST = 'localhost'\n")
    read = {"name": "read_file", "arguments": {"path": "settings.py"}}
    edit = {"name": "edit_file", "arguments": {"path": "settings.py",
            "old_string": "DEBUG = False", "new_string": "DEBUG = True"}}  # fmt: skip
    model = write_script(
        tmp_path / "s.json", [{"tool_calls": [read]}, {"tool_calls": [edit]}, {"content": "ok"}]
    )
    env = cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    term = Terminal([*mycode_command(), "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("›")
    term.type("turn debug on\r")
    term.expect("allow once")
    shown = term.output
    assert "-DEBUG = False" in shown and "+DEBUG = True" in shown  # before any answer
    assert "for this session: edit_file" in " ".join(term.plain.split())  # what 2 allows
    assert "→" not in shown.split("Allow edit_file")[-1]
    term.type("3")  # deny
    term.expect("ok")
    term.type("/exit\r")
    assert term.wait() == 0
    assert "DEBUG = False" in (workspace / "settings.py").read_text()
