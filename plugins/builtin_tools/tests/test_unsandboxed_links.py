"""Without a sandbox a committed symlink must not carry a read out of the workspace: every
operand, option value, redirection and glob is judged where its links lead, and a recursive
read that follows links asks when a link under it leads out. Real ``mycode -p`` runs,
``MYCODE_NO_BWRAP=1``, an untrusted workspace, a planted home folder."""

from __future__ import annotations

from pathlib import Path

from mycode_core.testing import run_cli, write_script
from mycode_core.testing.cli import CliResult

SECRET = "s3cr3t-behind-a-link"
READS = [
    "cat creds", "cat < creds", "head creds", "nl creds", "paste creds", "cut -c1- creds",
    "comm creds creds", "od -c creds", "strings creds", "diff --to-file=creds notes.txt",
    "grep -r secret ho/", "date -f creds", "wc --files0-from=creds", "du --files0-from=creds",
    "cat cr*", "cat cr{e,x}ds", "grep -Fnfcreds notes.txt", "grep -R s3cr3t .",
    "rg -L s3cr3t", "find -L . -name config", "ls -RL", "du -L", "tree -l",
    "diff -r . sub", "cd ho && cat .aws/credentials",
]  # fmt: skip
STILL_RUN = [
    "cat notes.txt",
    "cat sub/in/back",
    "wc -c sub/python",
    "grep -rn note sub/in",
    "ls -la",
    "cat sub/in/note",
    "wc -l notes.txt",
]


def _run(tmp_path: Path, workspace: Path, commands: list[str], user_home: Path) -> CliResult:
    turns = [
        {"content": "go", "tool_calls": [
            {"name": "run_command", "arguments": {"command": c}} for c in commands[i : i + 8]]}
        for i in range(0, len(commands), 8)
    ]  # fmt: skip
    model = write_script(tmp_path / "s.json", [*turns, {"content": "done"}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json"]
    env = {"MYCODE_NO_BWRAP": "1", "HOME": str(user_home)}
    return run_cli(args, workspace, tmp_path / "h", env, timeout=120)


def test_reads_through_links_that_leave_the_workspace_ask(tmp_path: Path) -> None:
    user_home = tmp_path / "userhome"
    (user_home / ".aws").mkdir(parents=True)
    (user_home / ".aws" / "credentials").write_text(f"key = {SECRET}\n")
    workspace = tmp_path / "ws"
    (workspace / "sub" / "in").mkdir(parents=True)
    (workspace / "notes.txt").write_text("notes\n")
    (workspace / "sub" / "in" / "note").write_text("note\n")
    (workspace / "creds").symlink_to(user_home / ".aws" / "credentials")
    (workspace / "ho").symlink_to(user_home)
    (workspace / "sub" / "in" / "up").symlink_to(user_home)  # found only by following links
    (workspace / "sub" / "in" / "back").symlink_to(workspace / "notes.txt")  # stays inside
    (workspace / "sub" / "python").symlink_to("/usr/bin/env")  # a system file: still fine

    run = _run(tmp_path, workspace, READS, user_home)
    denials = [e for e in run.of_type("permission") if e["decision"] == "deny"]
    assert len(denials) == len(READS), run.stdout
    assert {d["rule"] for d in denials} == {"builtin:unsandboxed"}
    assert SECRET not in run.stdout

    run = _run(tmp_path, workspace, STILL_RUN, user_home)
    results = run.of_type("tool_result")
    assert [r["is_error"] for r in results] == [False] * len(STILL_RUN), run.stdout
    assert SECRET not in run.stdout  # grep -r never follows a link it finds
