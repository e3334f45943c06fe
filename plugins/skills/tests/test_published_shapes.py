"""Discovery and validation on fixtures shaped like published skill collections.

The shapes come from looking at the public ``anthropics/skills`` collection and the skills of
the public Claude Code plugins (``anthropics/claude-code/plugins/*/skills``): a license line
pointing at a bundled file, quoted descriptions full of colons and quotes, a block-scalar
description over the limit, display names in Title Case with a ``version`` key, a template
whose folder is named differently, deep resource trees. The text is ours.
"""

from __future__ import annotations

from pathlib import Path

from mycode_skills.discovery import Catalog, Location
from mycode_skills.tool import LOAD_SKILL
from skill_helpers import write_skill

from mycode_core.testing import call_tool, make_context


def build_collection(root: Path) -> None:
    skills = root / "collection" / "skills"
    write_skill(
        skills,
        "sheets",
        raw_front=(
            "name: sheets\n"
            'description: "Use this skill when a spreadsheet is involved: open, edit, or fix '
            "files such as .xlsx or .csv; triggers include 'the budget sheet', formulas, and "
            'charts. Do NOT use it for: databases."\n'
            "license: Proprietary. LICENSE.txt has complete terms\n"
        ),
        files={
            "LICENSE.txt": "terms\n",
            "scripts/recalc.py": "print(1)\n",
            "schemas/ooxml/2006/main.xsd": "<xsd/>\n",
        },
    )
    write_skill(
        skills,
        "api-reference",
        raw_front=(
            "name: api-reference\n"
            "description: |-\n"
            + "".join(
                f"  Line {i} of a long trigger list: when X, when Y, when Z.\n" for i in range(25)
            )
            + "license: Complete terms in LICENSE.txt\n"
        ),
    )
    write_skill(skills, "poster-art", license="Complete terms in LICENSE.txt")
    write_skill(
        root / "collection" / "template",
        "",
        raw_front="name: template-skill\ndescription: Replace with what the skill does.\n",
    )
    plugin_skills = root / "plugins" / "dev-kit" / "skills"
    write_skill(
        plugin_skills,
        "hook-writing",
        raw_front=(
            "name: Hook Writing\n"
            'description: This skill should be used when the user asks to "add a hook", '
            '"block a command" or "validate tool use".\n'
            "version: 0.1.0\n"
        ),
        files={"references/patterns.md": "p\n", "examples/validate.sh": "exit 0\n"},
    )
    write_skill(
        plugin_skills,
        "migration-helper",
        raw_front="name: migration-helper\ndescription: Move prompts to a newer model.\n",
    )
    write_skill(root / "plugins" / "design" / "skills", "poster-art", description="The copy.")


def test_published_shapes(tmp_path: Path) -> None:
    build_collection(tmp_path)
    locations = [
        Location(tmp_path / "collection" / "skills", "user"),
        Location(tmp_path / "collection" / "template", "user"),
        *(
            Location(folder, "package")
            for folder in sorted((tmp_path / "plugins").glob("*/skills"))
        ),
    ]
    found = Catalog(locations).refresh()
    # the template folder's skill is named differently: warned about, loaded under its name;
    # the description over 1024 characters: warned about, loaded (Claude Code and Codex do)
    assert sorted(found.skills) == [
        "api-reference",
        "migration-helper",
        "poster-art",
        "sheets",
        "template-skill",
    ]
    assert found.skills["sheets"].license == "Proprietary. LICENSE.txt has complete terms"
    assert "Do NOT use it for: databases." in found.skills["sheets"].description
    rules = sorted(
        problem.rsplit("[rule ", 1)[-1].rstrip("]")
        for problem in found.problems
        if "[rule" in problem
    )
    assert rules == ["description-length", "name-characters", "name-folder"]
    shadowed = [p for p in found.problems if "ignored" in p]
    assert len(shadowed) == 1 and "poster-art" in shadowed[0]
    assert any("'Hook Writing'" in p for p in found.problems)
    assert any("'template-skill'" in p and "loaded under its name" in p for p in found.problems)
    assert any("'api-reference'" in p and "loaded, but" in p for p in found.problems)


def test_loading_a_published_shape_lists_its_deep_files(tmp_path: Path) -> None:
    build_collection(tmp_path)
    context = make_context(tmp_path)
    skills = context.home / "skills"
    skills.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "collection" / "skills").rename(skills)
    text = call_tool(LOAD_SKILL, {"name": "sheets"}, context).text()
    for name in ("LICENSE.txt", "scripts/recalc.py", "schemas/ooxml/2006/main.xsd"):
        assert f"- {name}" in text
