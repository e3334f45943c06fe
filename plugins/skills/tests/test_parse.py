"""SKILL.md parsing and validation to the agentskills.io rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_skills.listing import listing
from mycode_skills.parse import (
    HEAD_BYTES,
    MAX_BODY_BYTES,
    Skill,
    SkillProblem,
    parse_skill,
    read_body,
)
from skill_helpers import write_skill


def parsed(tmp_path: Path, folder: str = "demo-skill", **kwargs: object) -> Skill | SkillProblem:
    return parse_skill(write_skill(tmp_path, folder, **kwargs), "project")  # type: ignore[arg-type]


def rule_of(result: Skill | SkillProblem) -> str:
    assert isinstance(result, SkillProblem), result
    return result.rule


def test_valid_skill_with_every_optional_field(tmp_path: Path) -> None:
    skill = parsed(
        tmp_path,
        license="MIT",
        compatibility="Needs git and Python 3.11",
        metadata={"owner": "team-a", "version": "2.1"},
        allowed_tools="Read Grep Bash(git log:*)",
    )
    assert isinstance(skill, Skill)
    assert skill.name == "demo-skill"
    assert skill.description == "Helps with demo-skill tasks."
    assert skill.license == "MIT"
    assert skill.metadata == {"owner": "team-a", "version": "2.1"}
    assert skill.allowed_tools == ("Read", "Grep", "Bash(git log:*)")


def test_allowed_tools_separated_by_commas_as_claude_code_writes_them(tmp_path: Path) -> None:
    skill = parsed(tmp_path, allowed_tools="Read, Write, Edit, Bash(git log:*),Grep")
    assert isinstance(skill, Skill)
    assert skill.allowed_tools == ("Read", "Write", "Edit", "Bash(git log:*)", "Grep")


@pytest.mark.parametrize(
    ("raw_front", "hint"),
    [
        ("argument-hint: [pr-number]\n", "[pr-number]"),  # YAML reads a list
        ("argument-hint: '[file] [mode]'\n", "[file] [mode]"),
        ("argument-hint: <branch>\n", "<branch>"),
        ("", "[task]"),
    ],
)
def test_argument_hint_is_shown_as_written(tmp_path: Path, raw_front: str, hint: str) -> None:
    front = f"name: demo-skill\ndescription: Helps.\n{raw_front}"
    skill = parsed(tmp_path, raw_front=front)
    assert isinstance(skill, Skill) and skill.argument_hint == hint


def test_allowed_tools_as_a_yaml_list(tmp_path: Path) -> None:
    skill = parsed(tmp_path, allowed_tools=["Read", "Bash(git:*)"])
    assert isinstance(skill, Skill)
    assert skill.allowed_tools == ("Read", "Bash(git:*)")


@pytest.mark.parametrize(
    ("folder", "name", "rule"),
    [
        ("My Tools", None, "name-required"),  # no name, and the folder's is not valid
        ("My Tools", "", "name-required"),
        ("x", ["a", "list"], "name-required"),
        ("a" * 65, "a" * 65, "name-length"),
        ("pdf-tools", "PDF-Tools", "name-characters"),
        ("pdf_tools", "pdf_tools", "name-characters"),
        ("my-skill", "my skill", "name-characters"),
        ("-pdf", "-pdf", "name-hyphens"),
        ("pdf-", "pdf-", "name-hyphens"),
        ("pdf--tools", "pdf--tools", "name-hyphens"),
    ],
)
def test_name_rules(tmp_path: Path, folder: str, name: object, rule: str) -> None:
    result = parsed(tmp_path, folder, front={"name": name})
    assert rule_of(result) == rule
    assert isinstance(result, SkillProblem)
    assert rule in result.notice() and str(result.folder) in result.notice()


def test_a_valid_name_differing_from_its_folder_loads_under_its_name(tmp_path: Path) -> None:
    """agentskills.io's guide for clients: "Name doesn't match the parent directory name →
    warn, load anyway" (a collection's ``react-patterns/`` folder holding
    ``acme-react-patterns``)."""
    for lenient in (False, True):
        result = parse_skill(
            write_skill(tmp_path, "react-patterns", name="acme-react-patterns"), "project", lenient
        )
        assert isinstance(result, Skill)
        assert result.name == "acme-react-patterns" and result.renamed is None
        assert result.mismatch is not None and "[rule name-folder]" in result.mismatch


@pytest.mark.parametrize("name", [None, "", "  "])
def test_a_skill_without_a_name_loads_under_its_folders_name(
    tmp_path: Path, name: str | None
) -> None:
    """Claude Code reads a ``SKILL.md`` with no ``name`` under its folder's name; published
    skills rely on it. Listed so, with one warning (``renamed``) naming the rule."""
    folder = write_skill(tmp_path, "release-notes", front={"name": name})
    if name is None:  # no key at all, not a null
        text = (folder / "SKILL.md").read_text().replace("name: null\n", "")
        (folder / "SKILL.md").write_text(text)
        assert "name:" not in text
    result = parse_skill(folder, "project")
    assert isinstance(result, Skill)
    assert result.name == "release-notes" and result.description
    assert result.renamed is not None and "[rule name-required]" in result.renamed


def test_name_limits_that_are_fine(tmp_path: Path) -> None:
    assert isinstance(parsed(tmp_path, "a" * 64), Skill)
    assert isinstance(parsed(tmp_path, "a"), Skill)
    assert isinstance(parsed(tmp_path, "v2-tool-3"), Skill)
    assert isinstance(parsed(tmp_path, "données"), Skill)  # unicode lowercase letters


@pytest.mark.parametrize(
    ("front", "rule"),
    [
        ({"description": None}, "description-required"),
        ({"description": "   "}, "description-required"),
        ({"description": ["a", "b"]}, "description-required"),
        ({"allowed-tools": {"Read": True}}, "allowed-tools-type"),
        ({"allowed-tools": ["Read", 3]}, "allowed-tools-type"),
    ],
)
def test_field_rules(tmp_path: Path, front: dict[str, object], rule: str) -> None:
    assert rule_of(parsed(tmp_path, front=front)) == rule


@pytest.mark.parametrize(
    ("front", "rule", "left_out"),
    [
        ({"description": "x" * 1025}, "description-length", None),
        ({"compatibility": "y" * 501}, "compatibility-length", "compatibility"),
        ({"compatibility": {"requires": [{"cli": "gh"}]}}, "compatibility-type", "compatibility"),
        ({"metadata": ["not", "a", "map"]}, "metadata-type", "metadata"),
        ({"license": ["MIT"]}, "license-type", "license"),
    ],
)
def test_rules_other_clients_let_pass_warn_and_load(
    tmp_path: Path, front: dict[str, object], rule: str, left_out: str | None
) -> None:
    """agentskills.io's guide for clients: warn, load anyway — Claude Code and Codex load a
    long description, and nobody reads ``compatibility`` as a rule."""
    skill = parsed(tmp_path, front=front)
    assert isinstance(skill, Skill)
    assert [w.rsplit("[rule ", 1)[1] for w in skill.warnings] == [f"{rule}]"]
    if left_out == "metadata":
        assert skill.metadata == {}
    elif left_out is not None:
        assert getattr(skill, left_out) is None


def test_a_long_description_is_bounded_in_the_listing(tmp_path: Path) -> None:
    skill = parsed(tmp_path, front={"description": "word " * 400})
    assert isinstance(skill, Skill) and len(skill.description) > 1024
    [line] = [x for x in listing([skill]).splitlines() if x.startswith("- ")]
    assert len(line) <= len(f"- {skill.name}: ") + 1024 and line.endswith("…")


def test_limits_that_are_fine(tmp_path: Path) -> None:
    skill = parsed(tmp_path, front={"description": "d" * 1024, "compatibility": "c" * 500})
    assert isinstance(skill, Skill)


def test_unknown_fields_are_kept_aside_not_errors(tmp_path: Path) -> None:
    skill = parsed(tmp_path, front={"version": "0.3.0", "argument-hint": "[file]"})
    assert isinstance(skill, Skill)
    assert skill.extra == {"version": "0.3.0", "argument-hint": "[file]"}


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    front = "name: demo-skill\ndescription: Fine.\ntags: [one,\n  two\nkeys: {\n"
    result = parsed(tmp_path, raw_front=front)
    assert rule_of(result) == "yaml"
    assert isinstance(result, SkillProblem)
    assert "broken YAML" in result.message and "line" in result.message


def test_front_matter_not_a_mapping_or_never_closed(tmp_path: Path) -> None:
    assert rule_of(parsed(tmp_path, raw_front="- a\n- b\n")) == "frontmatter"
    unclosed = tmp_path / "unclosed"
    unclosed.mkdir()
    (unclosed / "SKILL.md").write_text("---\nname: unclosed\n", encoding="utf-8")
    assert rule_of(parse_skill(unclosed, "user")) == "frontmatter"


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    folder = tmp_path / "bom-skill"
    folder.mkdir()
    text = "\ufeff---\r\nname: bom-skill\r\ndescription: Windows file.\r\n---\r\nBody\r\n"
    (folder / "SKILL.md").write_bytes(text.encode("utf-8"))
    assert isinstance(parse_skill(folder, "user"), Skill)


def test_description_folded_to_one_line(tmp_path: Path) -> None:
    raw = "name: folded\ndescription: |-\n  First line.\n  TRIGGER when asked.\n"
    skill = parsed(tmp_path, "folded", raw_front=raw)
    assert isinstance(skill, Skill)
    assert skill.description == "First line. TRIGGER when asked."


def test_ten_megabyte_skill_is_read_bounded(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "huge", body="")
    with (folder / "SKILL.md").open("a", encoding="utf-8") as fh:
        line = "lorem ipsum dolor sit amet " * 4 + "\n"
        fh.write(line * (10 * 1024 * 1024 // len(line)))
    skill = parse_skill(folder, "user")
    assert isinstance(skill, Skill)
    body, truncated, size = read_body(skill)
    assert truncated and size >= 10_000_000
    assert len(body.encode("utf-8")) <= MAX_BODY_BYTES


def test_front_matter_that_never_ends_in_a_big_file(tmp_path: Path) -> None:
    folder = tmp_path / "endless"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\n" + "key: value\n" * (HEAD_BYTES // 5), "utf-8")
    result = parse_skill(folder, "user")
    assert rule_of(result) == "frontmatter"
    assert isinstance(result, SkillProblem) and "64 KiB" in result.message


def test_unreadable_skill_file(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    (folder / "SKILL.md").mkdir()  # a folder where the file should be
    assert rule_of(parse_skill(folder, "user")) == "unreadable"


def test_one_line_values_yaml_refuses_are_read_as_text(tmp_path: Path) -> None:
    """Front matter other clients accept though it is not valid YAML (agentskills.io's guide
    for clients: retry with such values quoted): a colon inside a plain description, Claude
    Code's ``argument-hint: [file] [mode]``, ``allowed-tools: *``. Other values keep their
    YAML meaning."""
    front = (
        "name: demo-skill\n"
        "description: Use when: the user asks for a report. Covers: tables, charts.\n"
        "argument-hint: [file] [mode]\n"
        "allowed-tools: *\n"
        "license: MIT\n"
        "metadata:\n"
        "  version: '1.0'\n"
    )
    skill = parsed(tmp_path, raw_front=front)
    assert isinstance(skill, Skill), skill
    assert skill.description == "Use when: the user asks for a report. Covers: tables, charts."
    assert skill.extra == {"argument-hint": "[file] [mode]"}
    assert skill.allowed_tools == ("*",)
    assert skill.license == "MIT" and skill.metadata == {"version": "1.0"}


def test_json_style_metadata_with_a_surrogate_pair_escape(tmp_path: Path) -> None:
    """Front matter written as JSON (``metadata: {"emoji": "\\uD83D\\uDD2D"}``, a published
    shape): the escaped surrogate pair is the one character it stands for, with libyaml too
    (which refuses surrogate escapes); an escaped backslash before ``u`` stays text."""
    raw = (
        "name: star-gazer\n"
        'description: "Looks at the sky \\uD83C\\uDF0C, politely."\n'
        'metadata: {"tool": {"emoji": "\\uD83D\\uDD2D", "path": "C:\\\\uD83D\\\\x",'
        ' "requires": {"bins": ["gh"]}}}\n'
    )
    result = parse_skill(write_skill(tmp_path, "star-gazer", raw_front=raw), "project")
    assert isinstance(result, Skill), result
    assert result.description == "Looks at the sky \U0001f30c, politely."
    assert result.metadata["tool"]["emoji"] == "\U0001f52d"
    assert result.metadata["tool"]["path"] == "C:\\uD83D\\x"
    assert result.metadata["tool"]["requires"] == {"bins": ["gh"]}


@pytest.mark.parametrize("name", ["yes", "no", "on", "off", "y", "2048"])
def test_names_yaml_1_1_reads_as_booleans_or_numbers_are_text(tmp_path: Path, name: str) -> None:
    """Claude Code's and Codex's YAML is 1.2: ``name: yes`` is the text ``yes`` there (a
    published skill is named so), not a boolean; a number is taken as its text."""
    skill = parsed(
        tmp_path, name, raw_front=f"name: {name}\ndescription: d\nmetadata:\n  beta: on\n"
    )
    assert isinstance(skill, Skill), skill
    assert skill.name == name and skill.metadata == {"beta": "on"}


def _plain(tmp_path: Path, folder: str, text: str) -> Skill | SkillProblem:
    path = tmp_path / folder
    path.mkdir()
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    return parse_skill(path, "user")


def test_no_front_matter_name_from_folder_description_from_first_paragraph(
    tmp_path: Path,
) -> None:
    """As Claude Code reads it: the folder's name, the first paragraph (headings, code and
    comments passed over), one ``frontmatter`` warning; the whole text is the body."""
    text = (
        "<!-- generated -->\n# Meeting notes\n\n```\nnot this\n```\n"
        "Keeps meeting notes tidy.\nUse when   asked.\n\n## Steps\n\nSecond paragraph.\n"
    )
    skill = _plain(tmp_path, "meeting-notes", text)
    assert isinstance(skill, Skill), skill
    assert skill.name == "meeting-notes"
    assert skill.description == "Keeps meeting notes tidy. Use when asked."
    assert len(skill.warnings) == 1 and "[rule frontmatter]" in skill.warnings[0]
    body, _truncated, _size = read_body(skill)
    assert body.startswith("<!-- generated -->") and "Second paragraph." in body


def test_no_front_matter_heading_only_empty_or_bad_folder_name(tmp_path: Path) -> None:
    heading = _plain(tmp_path, "plain", "# Just markdown\n")
    assert isinstance(heading, Skill) and heading.description == "Just markdown"
    assert rule_of(_plain(tmp_path, "empty", "\n\n")) == "frontmatter"
    bad = _plain(tmp_path, "Bad_Name", "Does things.\n")
    assert rule_of(bad) == "name-characters"
    assert isinstance(bad, SkillProblem) and "no front matter" in bad.message
