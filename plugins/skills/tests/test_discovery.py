"""Where skills come from, which one wins, symlinks, and the stat-based cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mycode_skills.discovery import Catalog, Location, default_locations
from skill_helpers import write_skill


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    workspace = tmp_path / "ws"
    home = tmp_path / "mycode-home"
    user_home = tmp_path / "user"
    for path in (workspace, home, user_home):
        path.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    return {"workspace": workspace, "home": home, "user": user_home, "tmp": tmp_path}


def catalog(
    places: dict[str, Path], cwd: Path | None = None, extra: list[Location] = ()
) -> Catalog:  # type: ignore[assignment]
    locations = default_locations(places["workspace"], places["home"], cwd)
    return Catalog(locations, extra=lambda: list(extra))


def test_every_location_is_found(places: dict[str, Path]) -> None:
    ws = places["workspace"]
    write_skill(ws / ".mycode" / "skills", "from-mycode")
    write_skill(ws / ".agents" / "skills", "from-agents")
    write_skill(ws / ".claude" / "skills", "from-claude")
    write_skill(places["home"] / "skills", "from-home")
    write_skill(places["user"] / ".agents" / "skills", "from-user-agents")
    package = write_skill(places["tmp"] / "pkg", "from-package")
    found = catalog(places, extra=(Location(package, "package"),)).refresh()
    assert {name: skill.source for name, skill in found.skills.items()} == {
        "from-mycode": "project",
        "from-agents": "project",
        "from-claude": "project",
        "from-home": "user",
        "from-user-agents": "agents",
        "from-package": "package",
    }
    assert found.problems == []
    assert [s.name for s in found.sorted()] == sorted(found.skills)


def test_nested_folders_down_to_the_cwd_nearest_wins(places: dict[str, Path]) -> None:
    ws = places["workspace"]
    sub = ws / "pkg" / "inner"
    sub.mkdir(parents=True)
    write_skill(ws / ".claude" / "skills", "shared", description="root version")
    write_skill(sub / ".agents" / "skills", "shared", description="inner version")
    write_skill(ws / "pkg" / ".mycode" / "skills", "middle")
    write_skill(ws / "elsewhere" / ".mycode" / "skills", "not-on-the-path")
    found = catalog(places, cwd=sub).refresh()
    assert set(found.skills) == {"shared", "middle"}
    assert found.skills["shared"].description == "inner version"
    assert len(found.problems) == 1
    assert "'shared'" in found.problems[0] and "takes precedence" in found.problems[0]
    # run from the root: only the root's skills
    assert set(catalog(places, cwd=ws).refresh().skills) == {"shared"}


def test_precedence_project_then_user_then_packages(places: dict[str, Path]) -> None:
    write_skill(places["workspace"] / ".agents" / "skills", "dup", description="project")
    write_skill(places["home"] / "skills", "dup", description="home")
    write_skill(places["user"] / ".agents" / "skills", "dup", description="agents")
    package = write_skill(places["tmp"] / "pkg", "dup", description="package")
    found = catalog(places, extra=(Location(package, "package"),)).refresh()
    assert found.skills["dup"].description == "project"
    assert len(found.problems) == 3
    assert all("ignored" in p and "(project) takes precedence" in p for p in found.problems)


def test_a_plugin_skill_whose_name_is_taken_stays_reachable_as_plugin_colon_name(
    places: dict[str, Path],
) -> None:
    write_skill(places["workspace"] / ".agents" / "skills", "dup", description="project")
    first = write_skill(places["tmp"] / "one" / "skills", "dup", description="plugin one")
    second = write_skill(places["tmp"] / "two" / "skills", "dup", description="plugin two")
    extra = [Location(first, "plugin:one"), Location(second, "plugin:two")]
    found = catalog(places, extra=extra).refresh()
    assert {name: s.description for name, s in found.skills.items()} == {
        "dup": "project",
        "one:dup": "plugin one",
        "two:dup": "plugin two",
    }
    assert len(found.problems) == 2
    assert all("listed as" in p and "(project)" in p for p in found.problems)
    assert found.find("two:dup") is found.skills["two:dup"]
    assert found.find("nope:dup") is None


def test_a_plugin_skill_namespaced_past_another_plugins_or_a_users_is_quiet(
    places: dict[str, Path],
) -> None:
    """discord, telegram and imessage all ship ``access`` and ``configure``: every run
    warned four times that telegram's and imessage's are ``telegram:access``... — Claude
    Code's own names for them. Only a project skill taking a plugin's name is still told."""
    write_skill(places["home"] / "skills", "mine", description="user")
    extra = [
        Location(write_skill(places["tmp"] / name / "skills", skill, description=name), source)
        for name, source in (("discord", "plugin:discord"), ("telegram", "plugin:telegram"))
        for skill in ("access", "mine")
    ]
    found = catalog(places, extra=extra).refresh()
    assert {name: s.description for name, s in found.skills.items()} == {
        "mine": "user",
        "access": "discord",
        "discord:mine": "discord",
        "telegram:access": "telegram",
        "telegram:mine": "telegram",
    }
    assert found.problems == []  # what a run tells; `mycode skills` still shows them
    assert len(found.remarks) == 3 and all("listed as" in line for line in found.remarks)
    assert found.find("discord:access") is found.skills["access"]


def test_the_winning_plugin_skill_also_answers_to_plugin_colon_name(
    places: dict[str, Path],
) -> None:
    folder = write_skill(places["tmp"] / "one" / "skills", "solo")
    found = catalog(places, extra=[Location(folder, "plugin:one")]).refresh()
    assert found.find("one:solo") is found.skills["solo"]
    assert found.find("other:solo") is None


def test_within_a_folder_mycode_beats_agents_beats_claude(places: dict[str, Path]) -> None:
    ws = places["workspace"]
    write_skill(ws / ".claude" / "skills", "same", description="claude")
    write_skill(ws / ".agents" / "skills", "same", description="agents")
    assert catalog(places).refresh().skills["same"].description == "agents"
    write_skill(ws / ".mycode" / "skills", "same", description="mycode")
    assert catalog(places).refresh().skills["same"].description == "mycode"


def test_invalid_skill_is_one_notice_and_the_others_load(places: dict[str, Path]) -> None:
    skills = places["workspace"] / ".agents" / "skills"
    write_skill(skills, "good-one")
    write_skill(skills, "Bad_Name")
    write_skill(skills, "broken", raw_front="name: broken\ndescription: : :\n  - x\n")
    (skills / "no-skill-file").mkdir()
    (skills / "README.md").write_text("not a skill", encoding="utf-8")
    found = catalog(places).refresh()
    assert list(found.skills) == ["good-one"]
    assert len(found.problems) == 2
    assert any("'Bad_Name'" in p and "name-characters" in p for p in found.problems)
    assert any("'broken'" in p and "rule yaml" in p for p in found.problems)


def test_project_symlink_leading_outside_is_refused(places: dict[str, Path]) -> None:
    ws = places["workspace"]
    outside = places["tmp"] / "outside"
    write_skill(outside, "sneaky")
    (ws / ".claude").mkdir()
    os.symlink(outside, ws / ".claude" / "skills")  # the skills folder itself
    (ws / ".agents" / "skills").mkdir(parents=True)
    os.symlink(outside / "sneaky", ws / ".agents" / "skills" / "sneaky")  # one skill folder
    found = catalog(places).refresh()
    assert found.skills == {}
    assert len(found.problems) == 2
    assert all("symlink leading outside the workspace" in p for p in found.problems)


def test_symlink_inside_the_workspace_is_fine(places: dict[str, Path]) -> None:
    ws = places["workspace"]
    write_skill(ws / "shared-skills", "linked")
    (ws / ".agents").mkdir()
    os.symlink(ws / "shared-skills", ws / ".agents" / "skills")
    assert list(catalog(places).refresh().skills) == ["linked"]


def test_user_locations_may_be_symlinks_anywhere(places: dict[str, Path]) -> None:
    elsewhere = places["tmp"] / "dotfiles"
    write_skill(elsewhere, "mine")
    os.symlink(elsewhere, places["home"] / "skills")
    assert list(catalog(places).refresh().skills) == ["mine"]


def test_refresh_parses_only_what_changed(places: dict[str, Path]) -> None:
    skills = places["workspace"] / ".agents" / "skills"
    for index in range(5):
        write_skill(skills, f"skill-{index}")
    cat = catalog(places)
    cat.refresh()
    assert cat.parses == 5
    cat.refresh()
    assert cat.parses == 5  # nothing changed: stat only
    folder = write_skill(skills, "skill-2", description="A new description, longer.")
    os.utime(folder / "SKILL.md", ns=(time.time_ns(), time.time_ns() + 10_000_000))
    write_skill(skills, "skill-new")
    found = cat.refresh()
    assert cat.parses == 7
    assert found.skills["skill-2"].description == "A new description, longer."
    assert "skill-new" in found.skills
    (skills / "skill-0" / "SKILL.md").unlink()
    assert "skill-0" not in cat.refresh().skills


def test_packages_are_asked_once(places: dict[str, Path]) -> None:
    calls = []

    def extra() -> list[Location]:
        calls.append(1)
        return [Location(places["tmp"] / "missing", "package")]

    cat = Catalog(default_locations(places["workspace"], places["home"], None), extra=extra)
    cat.refresh()
    cat.refresh()
    assert calls == [1]


def test_the_on_disk_index_spares_parsing_in_a_new_session(places: dict[str, Path]) -> None:
    skills = places["home"] / "skills"
    for index in range(3):
        write_skill(skills, f"indexed-{index}", metadata={"when": "2024-01-01"})
    write_skill(skills, "Invalid")
    index_file = places["tmp"] / "cache" / "index.json"
    locations = default_locations(places["workspace"], places["home"], None)
    first = Catalog(locations, index_file=index_file)
    found = first.refresh()
    assert first.parses == 4 and index_file.is_file()
    second = Catalog(locations, index_file=index_file)
    again = second.refresh()
    assert second.parses == 0
    assert again.skills == found.skills and again.problems == found.problems
    write_skill(skills, "indexed-1", description="Changed since.")
    os.utime(skills / "indexed-1" / "SKILL.md", ns=(1, 10**18))
    third = Catalog(locations, index_file=index_file)
    assert third.refresh().skills["indexed-1"].description == "Changed since."
    assert third.parses == 1


def test_a_corrupt_index_is_ignored(places: dict[str, Path]) -> None:
    write_skill(places["home"] / "skills", "fine")
    index_file = places["tmp"] / "index.json"
    index_file.write_text("{not json", encoding="utf-8")
    cat = Catalog(
        default_locations(places["workspace"], places["home"], None), index_file=index_file
    )
    assert list(cat.refresh().skills) == ["fine"]
    index_file.write_text('{"format": 1, "entries": {"x": 3}}', encoding="utf-8")
    cat = Catalog(
        default_locations(places["workspace"], places["home"], None), index_file=index_file
    )
    assert list(cat.refresh().skills) == ["fine"]


def test_folder_names_mode_lists_display_named_skills_under_their_folder(
    places: dict[str, Path],
) -> None:
    skills = places["home"] / "skills"
    write_skill(skills, "plugin-settings", front={"name": "Plugin Settings"})
    write_skill(skills, "Bad_Folder", front={"name": "Also Bad"})
    write_skill(skills, "fine-one")
    locations = default_locations(places["workspace"], places["home"], None)
    strict = Catalog(locations).refresh()
    assert sorted(strict.skills) == ["fine-one"]
    relaxed = Catalog(locations, folder_names=True).refresh()
    assert sorted(relaxed.skills) == ["fine-one", "plugin-settings"]
    assert relaxed.skills["plugin-settings"].renamed is not None
    assert any("listed under its folder's name 'plugin-settings'" in p for p in relaxed.problems)
    assert any("'Also Bad'" in p and "not loaded" in p for p in relaxed.problems)


def _case_sensitive(folder: Path) -> bool:
    probe = folder / "Case-Probe"
    probe.write_text("x", encoding="utf-8")
    try:
        return not (folder / "case-probe").exists()
    finally:
        probe.unlink()


def test_a_lowercase_skill_md_is_read_when_there_is_no_skill_md(places: dict[str, Path]) -> None:
    """``skill.md`` (which the agentskills.io reference tool ``skills-ref`` accepts) is read
    in a folder without ``SKILL.md``, for a folder of skills and for a location that is itself
    a skill folder; listed once, and its body and file are the lowercase file's."""
    skills = places["workspace"] / ".agents" / "skills"
    lower = write_skill(skills, "lower-case", body="Lowercase body.\n")
    (lower / "SKILL.md").rename(lower / "skill.md")
    alone = write_skill(places["tmp"] / "pkg", "alone-lower")
    (alone / "SKILL.md").rename(alone / "skill.md")
    found = catalog(places, extra=(Location(alone, "package"),)).refresh()
    assert sorted(found.skills) == ["alone-lower", "lower-case"]
    assert found.problems == []
    skill = found.skills["lower-case"]
    assert skill.file.samefile(lower / "skill.md")
    from mycode_skills.listing import loaded_text

    text, body = loaded_text(skill)
    assert body == "Lowercase body." and text.count("skill.md") == 1  # one file in its list


def test_skill_md_wins_over_a_lowercase_one_beside_it(places: dict[str, Path]) -> None:
    skills = places["workspace"] / ".agents" / "skills"
    both = write_skill(skills, "both-files", description="From the upper-case file.")
    if not _case_sensitive(both):
        pytest.skip("a case-insensitive file system holds one of the two only")
    (both / "skill.md").write_text(
        "---\nname: both-files\ndescription: From the lowercase file.\n---\nx\n", "utf-8"
    )
    found = catalog(places).refresh()
    assert list(found.skills) == ["both-files"] and found.problems == []
    assert found.skills["both-files"].description == "From the upper-case file."
    assert found.skills["both-files"].file == both / "SKILL.md"


def test_skills_in_group_folders_are_found_down_to_six_levels(places: dict[str, Path]) -> None:
    """``.agents/skills/team/deploy/SKILL.md``: Codex (whose folder ``.agents/skills`` is)
    scans six levels deep, and so does agentskills.io's guide for clients; a group is a
    folder without ``SKILL.md``. A skill's own folders are not searched, hidden folders and
    ``node_modules`` are skipped, a symlink loop ends."""
    skills = places["workspace"] / ".agents" / "skills"
    write_skill(skills / "team", "deploy")
    write_skill(skills / "a" / "b" / "c" / "d" / "e", "five-deep")
    write_skill(skills / "a" / "b" / "c" / "d" / "e" / "f", "too-deep")
    write_skill(skills / "top", "top", files={"templates/inner/SKILL.md": "---\nname: x\n---\n"})
    write_skill(skills / ".drafts", "draft")
    write_skill(skills / "node_modules" / "pkg", "vendored")
    (skills / "team" / "loop").symlink_to(skills / "team")
    found = catalog(places).refresh()
    assert sorted(found.skills) == ["deploy", "five-deep", "top"]
    assert found.problems == []


def test_a_strict_location_reads_only_its_immediate_folders(places: dict[str, Path]) -> None:
    """Agent Plugins §7.1: clients MUST NOT search deeper descendants for skills."""
    root = places["tmp"] / "plugin" / "skills"
    write_skill(root, "direct")
    write_skill(root / "group", "grouped")
    strict = Location(root, "plugin:p", strict=True)
    assert sorted(catalog(places, extra=[strict]).refresh().skills) == ["direct"]
    relaxed = Location(root, "plugin:p")
    assert sorted(catalog(places, extra=[relaxed]).refresh().skills) == ["direct", "grouped"]


def test_validate_skills_hook_reports_what_a_run_would(tmp_path: Path) -> None:
    """``validate_skills`` through the plugin manager, as ``plugins validate`` calls it: a
    Claude Code folder's remarks (quiet in a run) and refusals; a strict folder's skip."""
    from mycode_core.api import get_plugin_manager

    skills = tmp_path / "plugin" / "skills"
    write_skill(skills, "good")
    write_skill(skills, "Display", front={"name": "Shown Name"})
    write_skill(skills, "other", front={"name": "elsewhere"})
    hook = get_plugin_manager().hook
    found = hook.validate_skills(
        path=skills, root=tmp_path / "plugin", folder_names=True, strict=False
    )
    items = {(i["folder"].rsplit("/", 1)[1], i["rule"], i["loaded"]) for r in found for i in r}
    assert items == {("Display", "name-characters", False), ("other", "name-folder", True)}
    strict = hook.validate_skills(
        path=skills, root=tmp_path / "plugin", folder_names=False, strict=True
    )
    assert {(i["rule"], i["loaded"]) for r in strict for i in r} == {
        ("name-characters", False),
        ("name-folder", False),
    }
