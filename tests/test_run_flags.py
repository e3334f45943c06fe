"""``--allow`` / ``--deny`` (Claude Code's ``--allowedTools`` / ``--disallowedTools``) and
``--append-system-prompt``: settings of one run, given on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mycode_core.cli.run import split_rules
from mycode_core.testing import FakeOpenAIServer, run_cli, script_turn, turn, write_script


@pytest.mark.parametrize(
    ("value", "rules"),
    [
        ("Bash(git log:*) Edit", ["Bash(git log:*)", "Edit"]),
        ("Read,Grep , Glob", ["Read", "Grep", "Glob"]),
        ("run_command(npm run test, or not)", ["run_command(npm run test, or not)"]),
        ("  ", []),
    ],
)
def test_a_flag_value_holds_rules_separated_outside_parentheses(
    value: str, rules: list[str]
) -> None:
    assert split_rules(value) == rules


def _run(tmp_path: Path, *flags: str) -> list[dict[str, object]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = write_script(
        tmp_path / "turns.json",
        [
            script_turn("run_command", command="git push origin main"),
            script_turn("write_file", path="a.txt", content="a\n"),
        ],
    )
    done = run_cli(
        ["-p", "go", "--model", model, "--output-format", "stream-json", *flags],
        workspace,
        tmp_path / "home",
    )
    assert done.rc in (0, 1), done.stderr
    return [e for e in done.events if e["type"] == "permission"]


def test_allow_and_deny_rules_of_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    asked = _run(tmp_path / "plain")
    assert asked[0]["decision"] == "deny" and asked[0].get("layer") != "cli"  # -p cannot ask
    assert asked[1]["decision"] == "allow"
    flags = ["--allowedTools", "Bash(git push:*)", "--deny", "write_file"]
    decided = _run(tmp_path, *flags)
    assert (decided[0]["decision"], decided[0]["layer"]) == ("allow", "cli")
    assert decided[0]["rule"] == "run_command(git push:*)"
    assert (decided[1]["decision"], decided[1]["layer"]) == ("deny", "cli")
    assert not (tmp_path / "ws" / "a.txt").exists()


def test_a_value_that_is_no_rule_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(["-p", "go", "--model", "m", "--allow", "Bash("], tmp_path, tmp_path / "h")
    assert done.rc == 2
    assert done.stderr.strip().splitlines() == [
        "mycode: error: --allow 'Bash(': not a rule (write TOOL or TOOL(pattern))"
    ]


def test_append_system_prompt_ends_the_system_prompt(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(turn("bonjour"))
        done = run_cli(
            ["-p", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", "k",
             "--append-system-prompt", "Always answer in French."],
            tmp_path,
            tmp_path / "home",
        )  # fmt: skip
        assert done.rc == 0, done.stderr
        system = server.chat_requests[0].messages[0]
    assert system["role"] == "system"
    assert str(system["content"]).rstrip().endswith("Always answer in French.")


def test_claude_codes_spellings_of_the_run_options(tmp_path: Path) -> None:
    """``--max-turns``, ``-c`` and ``-r``: a script written for ``claude -p`` runs unchanged."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    looping = write_script(tmp_path / "loop.json", [script_turn("glob", pattern="*")] * 5)
    capped = run_cli(["-p", "go", "--model", looping, "--max-turns", "2",
                      "--output-format", "json"], workspace, home)  # fmt: skip
    assert capped.rc == 1 and capped.events[-1]["stop_reason"] == "max_steps"
    assert capped.events[-1]["steps"] == 2
    session = capped.events[-1]["session_id"]
    answer = write_script(tmp_path / "answer.json", [{"content": "still here"}])
    for flags in (["-c"], ["-r", session]):
        again = run_cli(["-p", "more", "--model", answer, "--output-format", "json", *flags],
                        workspace, home)  # fmt: skip
        assert again.rc == 0, again.stderr
        assert again.events[-1]["session_id"] == session


def test_claude_codes_bypass_and_verbose_flags(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    answer = write_script(tmp_path / "answer.json", [{"content": "ok"}])
    base = ["-p", "go", "--model", answer, "--output-format", "stream-json"]
    done = run_cli([*base, "--dangerously-skip-permissions", "--verbose"], workspace, home)
    assert done.rc == 0, done.stderr
    assert done.events[0]["permission_mode"] == "bypass"
    both = run_cli([*base, "--dangerously-skip-permissions", "--permission-mode", "plan"],
                   workspace, home)  # fmt: skip
    assert both.rc == 2 and "give one of them" in both.stderr
