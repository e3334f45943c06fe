"""End to end: a scripted model loads a skill, then reads a file of its folder outside the
workspace; anything else outside stays refused, and the folder is read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from skill_helpers import write_skill

from mycode_core.testing import run_cli, write_plugin_dist, write_script


def _run_turns(
    tmp_path: Path, workspace: Path, home: Path, user: Path, prompt: str, turns: list[Any]
) -> Any:
    """Run ``mycode -p PROMPT`` with the scripted ``turns`` (``HOME`` = ``user``); it must
    end well."""
    script = write_script(tmp_path / "turns.json", turns)
    result = run_cli(
        ["-p", prompt, "--model", script, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
        env={"HOME": str(user)},
    )
    assert result.rc == 0, result.stderr
    return result


def _home_skill(
    tmp_path: Path, name: str, body: str, files: dict[str, str]
) -> tuple[Path, Path, Path, Path]:
    """A workspace, a MYCODE_HOME holding skill ``name`` and a user home: the three folders
    and the skill's resolved folder."""
    workspace, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for path in (workspace, user):
        path.mkdir()
    folder = write_skill(home / "skills", name, body=body, files=files).resolve()
    return workspace, home, user, folder


def test_load_skill_then_read_its_files_outside_the_workspace(tmp_path: Path) -> None:
    workspace, home, user, folder = _home_skill(
        tmp_path,
        "deploy-check",
        "Read references/steps.md, then run the listed checks.\n",
        {"references/steps.md": "STEP ONE: verify the tag\n"},
    )
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("do not show\n", encoding="utf-8")
    sibling = home / "not-a-skill.txt"
    sibling.write_text("also private\n", encoding="utf-8")
    result = _run_turns(
        tmp_path,
        workspace,
        home,
        user,
        "check the deploy",
        [
            {"tool_calls": [{"name": "load_skill", "arguments": {"name": "deploy-check"}}]},
            {
                "tool_calls": [
                    {
                        "name": "read_file",
                        "arguments": {"path": str(folder / "references/steps.md")},
                    }
                ]
            },
            {"tool_calls": [{"name": "read_file", "arguments": {"path": str(secret)}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": str(sibling)}}]},
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": str(folder / "new.md"), "content": "x"},
                    }
                ]
            },
            {"content": "checked"},
        ],
    )
    results = result.of_type("tool_result")
    assert [r["name"] for r in results] == [
        "load_skill",
        "read_file",
        "read_file",
        "read_file",
        "write_file",
    ]
    loaded, inside, secret_read, sibling_read, written = results
    assert not loaded["is_error"]
    assert "Read references/steps.md" in str(loaded["content"])
    assert "- references/steps.md" in str(loaded["content"])
    assert not inside["is_error"], inside
    assert "STEP ONE: verify the tag" in str(inside["content"])
    assert secret_read["is_error"] and "do not show" not in str(secret_read["content"])
    assert sibling_read["is_error"] and "also private" not in str(sibling_read["content"])
    assert written["is_error"]
    assert not (folder / "new.md").exists()
    # the permission event of the skill file's read says where it is: not "in the workspace"
    allowed = next(e for e in result.of_type("permission") if e["id"] == inside["id"])
    assert allowed["decision"] == "allow"
    assert allowed["rule"] == "builtin:read-readable-folder"
    assert "workspace." not in allowed["reason"] and str(folder) in allowed["reason"]
    assert "made readable for this run" in allowed["reason"]


PACKAGE_PLUGIN = """
from pathlib import Path

import pytest
from mycode_core import hookimpl

SKILLS = Path(__file__).parent / "shipped_skills"


@hookimpl(optionalhook=True)
def register_skills(register, context):
    register(SKILLS)
"""


def test_a_package_ships_skills_through_register_skills(tmp_path: Path) -> None:
    workspace, home, user, site = (
        tmp_path / "ws",
        tmp_path / "home",
        tmp_path / "user",
        tmp_path / "site",
    )
    for path in (workspace, user):
        path.mkdir()
    write_plugin_dist(site, "shipper", PACKAGE_PLUGIN)
    write_skill(site / "shipped_skills", "from-a-package", description="Shipped in a wheel.")
    write_skill(home / "skills", "from-home")
    env = {"HOME": str(user)}
    listed = run_cli(["skills", "--json"], cwd=workspace, home=home, env=env, pythonpath=[site])
    assert listed.rc == 0, listed.stderr
    assert '"from-a-package"' in listed.stdout and '"package"' in listed.stdout
    script = write_script(
        tmp_path / "turns.json",
        [{"tool_calls": [{"name": "load_skill", "arguments": {"name": "from-a-package"}}]}],
    )
    run = run_cli(
        ["-p", "go", "--model", script, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
        env=env,
        pythonpath=[site],
    )
    assert run.rc == 0, run.stderr
    loaded = run.of_type("tool_result")[0]
    assert not loaded["is_error"] and "Follow these steps." in str(loaded["content"])
    # the package loads without the skills plugin too (optionalhook), and adds nothing
    alone = run_cli(
        ["-p", "go", "--model", script, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
        env={**env, "MYCODE_DISABLE_PLUGINS": "skills", "MYCODE_STRICT_PLUGINS": "1"},
        pythonpath=[site],
    )
    assert alone.rc == 0, alone.stderr
    system = alone.of_type("system")[0]
    assert "shipper" in system["plugins"] and "load_skill" not in system["tools"]


def test_a_skill_script_under_mycode_home_runs_in_the_sandbox(tmp_path: Path) -> None:
    """A skill in ``$MYCODE_HOME/skills`` whose instructions say "run scripts/x.py --help":
    the sandbox hides ``MYCODE_HOME``, but the folder of a listed skill stays visible to
    commands, read-only; the rest of ``MYCODE_HOME`` (config, sessions) stays hidden."""
    workspace, home, user, folder = _home_skill(
        tmp_path,
        "report-tool",
        "Run scripts/report.py --help first.\n",
        {"scripts/report.py": "print('usage: report.py [-h] INPUT')\n"},
    )
    (home / "config.toml").write_text("# secret-marker\n", encoding="utf-8")
    command = (
        f"python3 {folder}/scripts/report.py --help; cat {home.resolve()}/config.toml; "
        f"touch {folder}/made-by-command"
    )
    ran = _run_turns(
        tmp_path,
        workspace,
        home,
        user,
        "make the report",
        [
            {"tool_calls": [{"name": "load_skill", "arguments": {"name": "report-tool"}}]},
            {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
            {"content": "ran it"},
        ],
    ).of_type("tool_result")[1]
    if not ran.get("metadata", {}).get("sandboxed"):
        pytest.skip("no command sandbox here")
    output = str(ran["content"])
    assert "usage: report.py [-h] INPUT" in output
    assert "secret-marker" not in output
    assert not (folder / "made-by-command").exists()
