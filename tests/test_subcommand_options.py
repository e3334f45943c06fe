"""Run options typed before a subcommand reach it, or are named as ignored (never dropped)."""

from __future__ import annotations

import json
from pathlib import Path

from mycode_core.testing import run_cli


def _claude_folder(root: Path) -> Path:
    """A Claude Code plugin folder with one skill."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "kit"}))
    skill = root / "skills" / "tidy-up" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: tidy-up\ndescription: tidy a project\n---\nTidy it.\n")
    return root


def test_plugin_dir_before_plugins_and_skills_counts(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    folder = _claude_folder(tmp_path / "kit")
    listed = run_cli(["--plugin-dir", str(folder), "plugins"], cwd=workspace, home=home)
    assert listed.rc == 0, listed.stderr
    assert [row["name"] for row in json.loads(listed.stdout) if row.get("format")] == ["kit"]
    skills = run_cli(["--plugin-dir", str(folder), "skills", "--json"], cwd=workspace, home=home)
    assert skills.rc == 0, skills.stderr
    rows = json.loads(skills.stdout)["skills"]
    assert [(row["name"], row["plugin"]) for row in rows] == [("tidy-up", "kit")]
    after = run_cli(["skills", "--json", "--plugin-dir", str(folder)], cwd=workspace, home=home)
    assert json.loads(after.stdout)["skills"] == rows
    assert run_cli(["skills", "--json"], cwd=workspace, home=home).stdout.count("tidy-up") == 0


def test_cwd_before_a_subcommand_is_its_workspace_and_its_own_value_wins(tmp_path: Path) -> None:
    home, here = tmp_path / "home", tmp_path / "here"
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (here, first, second):
        folder.mkdir()
    for folder in (first, second):
        note = folder / ".agents" / "skills" / f"{folder.name}-skill" / "SKILL.md"
        note.parent.mkdir(parents=True)
        note.write_text(f"---\nname: {folder.name}-skill\ndescription: d\n---\nbody\n")

    def names(*args: str) -> list[str]:
        out = run_cli(list(args), cwd=here, home=home)
        assert out.rc == 0, out.stderr
        return [row["name"] for row in json.loads(out.stdout)["skills"]]

    assert names("--cwd", str(first), "skills", "--json") == ["first-skill"]
    assert names("--cwd", str(first), "skills", "--json", "--cwd", str(second)) == ["second-skill"]


def test_an_option_the_subcommand_has_no_use_for_is_named(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    out = run_cli(["--model", "some-model", "sessions"], cwd=workspace, home=home)
    assert out.rc == 0
    assert "`mycode sessions` does not take --model: ignored" in out.stderr
    quiet = run_cli(["sessions"], cwd=workspace, home=home, env={"MYCODE_MODEL": "m"})
    assert "does not take" not in quiet.stderr  # an environment variable is not a typed option
