"""A strict location (an Agent Plugins folder's ``skills/``, its §7.1): each immediate folder
holding a file named exactly ``SKILL.md`` is one skill, and nothing else is — beside the same
layout read leniently, as Claude Code and Codex folders and plain locations are."""

from __future__ import annotations

from pathlib import Path

from mycode_skills.check import check_skills
from mycode_skills.discovery import Catalog, Location
from skill_helpers import write_skill


def _both(skills: Path) -> tuple[Catalog, Catalog]:
    strict = Location(skills, "plugin:p", confined=skills.parent, strict=True)
    lenient = Location(skills, "plugin:p", confined=skills.parent, folder_names=True)
    return Catalog([strict]), Catalog([lenient])


def test_a_skill_md_in_skills_itself_hides_no_skill(tmp_path: Path) -> None:
    """``skills/SKILL.md`` beside ``skills/good/SKILL.md``: the strict location listed only
    ``skills`` (the folder itself, as a lenient location reads it) and never ``good``. Now
    ``good`` is the skill and ``skills/SKILL.md`` one problem line (validate: a warning)."""
    skills = tmp_path / "p" / "skills"
    write_skill(skills, "good")
    (skills / "SKILL.md").write_text("---\nname: skills\ndescription: d\n---\nx\n")
    strict, lenient = _both(skills)
    found = strict.refresh()
    assert sorted(found.skills) == ["good"]
    [line] = found.problems
    assert f"{skills / 'SKILL.md'} is not a skill" in line
    # Claude Code and Codex folders keep reading a skills folder holding SKILL.md as one
    # skill (a manifest's "skills": ["./skills/pdf"] names single skills that way)
    assert sorted(lenient.refresh().skills) == ["skills"]
    findings = check_skills(skills, skills.parent, folder_names=False, strict=True)
    assert [(f["rule"], f["loaded"]) for f in findings] == [("location", False)]
    assert "is not a skill" in findings[0]["message"]


def test_only_a_file_named_exactly_skill_md_counts(tmp_path: Path) -> None:
    """A lowercase ``skill.md`` was loaded from a strict location (while ``mycode plugins``
    left it out of ``contributes``); now it is reported, not read — lenient locations still
    read it."""
    skills = tmp_path / "p" / "skills"
    write_skill(skills, "upper")
    lower = write_skill(skills, "lower")
    (lower / "SKILL.md").rename(lower / "skill.md")
    strict, lenient = _both(skills)
    found = strict.refresh()
    assert sorted(found.skills) == ["upper"]
    assert [p for p in found.problems if "skill.md" in p] == [
        f"skill folder {lower} not loaded: its skill file is skill.md, and an Agent Plugins "
        "folder's skill file is named exactly SKILL.md"
    ]
    assert sorted(lenient.refresh().skills) == ["lower", "upper"]
    findings = check_skills(skills, skills.parent, folder_names=False, strict=True)
    assert any("skill.md" in f["message"] for f in findings)


def test_a_hidden_skill_folder_is_reported(tmp_path: Path) -> None:
    """``skills/.hidden/SKILL.md`` is an immediate folder holding ``SKILL.md``: a discovered
    skill, and an invalid one (no valid name starts with a dot). It was skipped without a
    word; now it is reported as other invalid skills are. A folder named like a dependency
    folder (``venv``) is a skill there too. Lenient locations still skip both quietly."""
    skills = tmp_path / "p" / "skills"
    write_skill(skills, "good")
    write_skill(skills, ".hidden", name="hidden")
    write_skill(skills, ".dotted", name=".dotted")
    write_skill(skills, "venv")
    strict, lenient = _both(skills)
    found = strict.refresh()
    assert sorted(found.skills) == ["good", "venv"]
    assert len(found.problems) == 2
    assert any(".hidden" in p and "not loaded" in p and "name-folder" in p for p in found.problems)
    assert any(".dotted" in p and "not loaded" in p for p in found.problems)
    assert sorted(lenient.refresh().skills) == ["good"] and lenient.snapshot.problems == []
    findings = check_skills(skills, skills.parent, folder_names=False, strict=True)
    assert sorted(Path(f["folder"]).name for f in findings if not f["loaded"]) == [
        ".dotted",
        ".hidden",
    ]
