"""Issue 13: the permission policy is bounded — long commands are decided before any parsing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mycode_builtin_tools.permissions.commands import is_fork_bomb, judge_command
from mycode_builtin_tools.permissions.rules import command_matches, glob_match

ROOT = Path("/tmp")


@pytest.mark.parametrize(
    "command",
    ["a" * 1_000_000, ":(){ " * 200_000, "x|" * 500_000, "f() { " + "x" * 1_000_000],
)
def test_a_1mb_command_is_decided_quickly(command: str) -> None:
    started = time.monotonic()
    ((text, finding),) = judge_command(command, ROOT, ROOT)
    assert time.monotonic() - started < 5.0  # the one explicit time bound the issue asks for
    assert finding.decision == "ask" and finding.rule == "builtin:command-too-long"
    assert "script" in finding.reason and len(text) < 300


def test_fork_bombs_still_found_without_backreferences() -> None:
    assert is_fork_bomb(":(){ :|:& };:")
    assert is_fork_bomb("bomb() { bomb | bomb & }; bomb")
    assert not is_fork_bomb("f() { echo hi; }; f")
    assert judge_command(":(){ :|:& };:", ROOT, ROOT)[0][1].rule == "builtin:fork-bomb"


def test_glob_rules_match_like_before() -> None:
    assert glob_match("git * --force", "git push origin --force")
    assert not glob_match("git * --force", "git push origin")
    assert glob_match("*", "") and glob_match("a*b*c", "abc") and not glob_match("a*b*c", "acb")
    assert command_matches("npm run *", "npm run build")
    assert not glob_match("*a*a*a*a*a*b", "a" * 20_000)
