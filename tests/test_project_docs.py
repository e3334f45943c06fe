"""The README's Quickstart is what CI runs: two commands, the second one in `.ci/run`."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quickstart_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_quickstart_has_exactly_two_commands_demo_then_tests() -> None:
    commands = quickstart_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    assert commands[0].endswith("mycode demo")
    assert commands[1].endswith("pytest")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = quickstart_commands()[1]
    assert any(line.strip() == test_command for line in ci.splitlines())


def test_ci_runs_the_readme_demo_command_on_debians_python() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    block = ci.split("# --- issue 14:", 1)[1].split("# --- end issue 14", 1)[0]
    demo_command = quickstart_commands()[0]
    assert any(line.strip() == demo_command for line in block.splitlines())
    assert 'PATH="/usr/bin:/bin"' in block  # `python3` there is Debian's (PEP 668) python3
    assert "python3-venv" in block


def test_quickstart_commands_need_no_pip_outside_a_venv() -> None:
    for command in quickstart_commands():
        assert command.startswith("python3 -m venv .venv && ")
        assert "python3 -m pip" not in command  # refused by a PEP 668 Python
    assert "--no-dev" in quickstart_commands()[0]  # the demo installs no dev toolchain


def test_nothing_depends_on_the_unrelated_mycode_distribution() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[1]
    files = [root / "pyproject.toml", *root.glob("plugins/*/pyproject.toml")]
    files += list(root.glob("examples/*/pyproject.toml"))
    assert tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"] == "mycode-core"
    for path in files:
        project = tomllib.loads(path.read_text())["project"]
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        names = {re.split(r"[\s<>=!~\[;@]", r, maxsplit=1)[0].lower() for r in requirements}
        assert "mycode" not in names, path
        if path.parent.parent.name in ("plugins", "examples"):
            assert "mycode-core" in names, path


def test_the_deviations_say_plan_mode_allows_delegate_task() -> None:
    """Plan mode lets ``delegate_task`` run (rule ``builtin:read-only-tool``) and the child
    inherits plan mode (plugins/subagents' test_plan_mode_lets_children_run_but_they_stay_
    read_only): the README must not say it is denied."""
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    deviations = text.split("## Deviations from SPEC.md", 1)[1]
    assert "plan mode denies `delegate_task`" not in text
    assert "allows `delegate_task` (rule `builtin:read-only-tool`" in deviations
    assert "every child inherits plan mode" in deviations


def test_the_exit_codes_name_the_code_of_each_signal() -> None:
    """130 is Ctrl-C only: SIGTERM exits 143 and SIGHUP 129 (128 + the signal; tested in
    test_cancellation), in ``-p`` as in the interactive session."""
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    codes = text.split("### Exit codes", 1)[1].split("###", 1)[0]
    assert "`130` interrupted by Ctrl-C (SIGINT)" in codes
    assert "SIGTERM it is `143`, by SIGHUP `129`" in codes
    assert "Ctrl-C (like SIGTERM) ends the run the same way with exit 130" not in text
