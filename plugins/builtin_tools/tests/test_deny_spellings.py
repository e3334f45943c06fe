"""A deny rule holds against every spelling of the command it denies (SPEC §8), in both
sandbox and no-sandbox modes: the deny/ask judgement happens before any sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_builtin_tools.permissions.policy import decide
from mycode_builtin_tools.tools import build_tools

from mycode_core.config import load_settings
from mycode_core.records import RunContext, ToolCall

RUN = {tool.name: tool for tool in build_tools()}["run_command"]
GIT_PUSH = [
    "git push", "git push origin main", "/usr/bin/git push", "\\git push", '"git" push',
    "g'i't push", "gi\\t push", "git 'push'", 'git "push" --force', "git -C . push",
    "git -c x=y push", "git --no-pager push", "git -P push", "git --git-dir=.git push",
    "git --git-dir .git --work-tree . push", "git -c alias.p=push p", "command git push",
    "builtin command git push", "exec git push", "time git push", "time -p git push",
    "nice git push", "nice -n 5 git push", "nohup git push", "timeout 5 git push",
    "timeout -s KILL 5s git push", "env git push", "env -i git push", "env A=1 git push",
    "env -S 'git push'", "stdbuf -o0 git push", "setsid git push", "sudo git push",
    "sudo -u root git push", "xargs git push < /dev/null", "echo push | xargs git",
    "echo git push | xargs -I{} sh -c '{}'", "script -qc 'git push' /dev/null",
    "busybox sh -c 'git push'", "bash -c 'git push'", "sh -c \"git push\"", "zsh -c 'git push'",
    "bash -lc 'cd . && git push'", "eval git push", "eval 'git push'", "eval \"$CMD\"",
    "x=git; $x push", "$GIT push", "${GIT} push", "git${IFS}push", "$(which git) push",
    "`which git` push", "\"$(command -v git)\" push", "git $(echo push)", "git `echo push`",
    "printf 'git push' | sh", "echo git push | bash", "sh <<EOF\ngit push\nEOF",
    "bash < script.sh", "source ./push.sh", ". ./push.sh", "alias g=git; g push",
    "f(){ git push; }; f", "function f { git push; }; f", "(git push)", "{ git push; }",
    "true && git push", "false || git push", "if true; then git push; fi",
    "for i in 1; do git push; done", "echo $(git push)", "cat <(git push)",
    "find . -maxdepth 0 -exec git push \\;", "python3 -c \"import os; os.system('git push')\"",
    "perl -e 'system(\"git push\")'", "awk 'BEGIN{system(\"git push\")}'", "gi? push",
    "{git,push}", "strace -f git push", "su -c 'git push'", "watch git push",
    "git$'\\x20'push", "hash -p /usr/bin/git g; g push",
]  # fmt: skip
ORDINARY = {
    "git status": "allow", "ls": "allow", "pytest -q": "allow", "echo hi | grep h": "allow",
    "git log --oneline -5": "allow", "git diff": "allow",
}  # fmt: skip


def _context(workspace: Path, home: Path, sandbox: str, mode: str = "default") -> RunContext:
    (home / "config.toml").write_text(
        f'sandbox = "{sandbox}"\n[permissions]\ndeny = ["run_command(git push:*)"]\n'
    )
    settings = load_settings(workspace, home, cli={"permission_mode": mode})
    return RunContext(workspace=workspace, home=home, settings=settings, session_id="s")


def _verdict(context: RunContext, command: str):  # type: ignore[no-untyped-def]
    call = ToolCall(id="1", name="run_command", arguments={"command": command})
    return decide(call, RUN, context)


def test_enough_spellings() -> None:
    assert len(set(GIT_PUSH)) >= 57


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_no_spelling_of_git_push_runs(workspace: Path, home: Path, sandbox: str, mode: str) -> None:
    context = _context(workspace, home, sandbox, mode)
    allowed = [c for c in GIT_PUSH if _verdict(context, c).decision == "allow"]
    assert allowed == []
    if mode == "bypass":  # nobody is asked: the deny rule must hold on its own
        asked = [c for c in GIT_PUSH if _verdict(context, c).decision != "deny"]
        assert asked == []


def test_a_literal_spelling_is_denied_by_the_rule(workspace: Path, home: Path) -> None:
    context = _context(workspace, home, "auto")
    for command in ("/usr/bin/git push", "git -C . push", "env git push", "bash -c 'git push'"):
        verdict = _verdict(context, command)
        assert verdict.decision == "deny", command
        assert verdict.rule == "run_command(git push:*)"


def test_an_unreadable_command_asks_naming_the_rule(workspace: Path, home: Path) -> None:
    verdict = _verdict(_context(workspace, home, "auto"), "$(which git) push")
    assert verdict.decision == "ask"
    assert "git push" in verdict.reason and "may" in verdict.reason


def test_ordinary_commands_unchanged_in_a_sandbox(workspace: Path, home: Path) -> None:
    context = _context(workspace, home, "auto")
    from mycode_builtin_tools.tools.run_command import sandboxed

    if not sandboxed(context):
        pytest.skip("no bubblewrap sandbox here")
    for command, wanted in ORDINARY.items():
        assert _verdict(context, command).decision == wanted, command
    assert _verdict(context, "echo $HOME | grep h").decision == "allow"
    assert _verdict(context, "find . -name '*.py' | xargs grep foo").decision == "allow"
