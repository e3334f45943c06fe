"""Without a sandbox a command runs unasked only when every part is provably harmless
(SPEC §8): the escapes of security round 3 all ask, ordinary reads still run."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_builtin_tools.permissions.policy import decide
from mycode_builtin_tools.tools import build_tools

from mycode_core import trust
from mycode_core.config import load_settings
from mycode_core.records import RunContext, ToolCall

RUN = {tool.name: tool for tool in build_tools()}["run_command"]
ESCAPES = [
    "bash -c 'echo x >> ~/.bashrc'", "sh -c 'echo x > notes.txt'", "eval 'echo x > a'",
    "eval \"$CMD\"", "bash", "sh script.sh", "printf 'ls' | sh",
    "python3 -c \"open('/tmp/x', 'w')\" x/pytest", "uniq a OUT", "xxd -r dump bin",
    "xxd -revert dump", "find . -fprint0 out", "find . -fprint out", "find . -fls out",
    "find . -fprintf out %p", "find . -exec sh {} ;", "find . -delete", "flock FILE ls",
    "LESSOPEN='|touch pwned' less a.txt", "less a.txt", "more a.txt", "BASH_ENV=./e.sh bash -c ls",
    "ENV=./e.sh sh -c ls", "PAGER='sh -c x' git log", "GIT_EXTERNAL_DIFF=./x git diff",
    "env GIT_PAGER=./x ls", "sort -o out a", "sort -uo out a", "sort --output=out a",
    "tree -o out", "file -C -m magic", "echo x > out.txt", "echo x >> out.txt", "ls >| out",
    "ls &> out", "cat /proc/$PPID/environ", "cat /proc/self/environ", "cat /proc/1/mem",
    "cat /proc/*/environ", "head -c 100 < /proc/self/environ", "cd /proc/self && cat environ",
    "cat ~/.aws/credentials", "ls ~/.ssh", "cat $HOME/.netrc", "setsid sh -c 'env -i sleep 30 &'",
    "date -s 2020-01-01", "alias l=ls; l", "source ./x.sh", "awk 'BEGIN{system(\"id\")}'",
]  # fmt: skip
HARMLESS = [
    "ls -la", "cat README.md", "grep -rn foo .", "echo hi | grep h", "wc -l a b",
    "find . -name '*.py'", "sort a | uniq -c", "ls 2>/dev/null", "cat a > /dev/null",
    "cat /proc/cpuinfo", "LC_ALL=C sort a", "xxd a", "head -n 5 a <<< x",
]  # fmt: skip


def _context(workspace: Path, home: Path, trusted: bool = False) -> RunContext:
    (home / "config.toml").write_text('sandbox = "off"\n')
    if trusted:
        trust.trust(workspace, home)
    settings = load_settings(workspace, home, cli={})
    return RunContext(workspace=workspace, home=home, settings=settings, session_id="u")


def _decision(context: RunContext, command: str) -> str:
    call = ToolCall(id="1", name="run_command", arguments={"command": command})
    return decide(call, RUN, context).decision


@pytest.mark.parametrize("trusted", [False, True])
def test_every_escape_asks_or_is_denied(workspace: Path, home: Path, trusted: bool) -> None:
    context = _context(workspace, home, trusted)
    assert [c for c in ESCAPES if _decision(context, c) == "allow"] == []


def test_harmless_reads_still_run(workspace: Path, home: Path) -> None:
    context = _context(workspace, home)
    assert {c: _decision(context, c) for c in HARMLESS} == dict.fromkeys(HARMLESS, "allow")


def test_validation_commands_need_a_trusted_workspace(workspace: Path, home: Path) -> None:
    untrusted = _context(workspace, home)
    call = ToolCall(id="1", name="run_command", arguments={"command": "pytest -q"})
    verdict = decide(call, RUN, untrusted)
    assert verdict.decision == "ask" and "trust" in verdict.reason
    trusted = _context(workspace, home, trusted=True)
    for command in ("pytest -q", ".venv/bin/pytest -x tests", "python3 -m pytest", "make test"):
        assert _decision(trusted, command) == "allow", command
    assert _decision(trusted, "python3 -c \"open('x', 'w')\" x/pytest") == "ask"
    assert _decision(trusted, "pytest -q > out.txt") == "ask"


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_process_environments_are_never_read(workspace: Path, home: Path, sandbox: str) -> None:
    (home / "config.toml").write_text(f'sandbox = "{sandbox}"\n')
    settings = load_settings(workspace, home, cli={"permission_mode": "bypass"})
    context = RunContext(workspace=workspace, home=home, settings=settings, session_id="u")
    for command in (
        "cat /proc/1/environ",
        "xxd /proc/self/mem",
        "tr '\\0' '\\n' < /proc/7/environ",
    ):
        assert _decision(context, command) == "deny", command
