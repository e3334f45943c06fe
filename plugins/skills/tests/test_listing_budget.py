"""The skills listing's size budget: a share of the context window, descriptions shortened
first, then names only, then a counted rest; every skill still loads by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mycode_skills.budget import (
    CUT_NOTE,
    MIN_DESCRIPTION,
    Budget,
    listing_budget,
    render,
)
from mycode_skills.listing import listing
from mycode_skills.parse import Skill
from skill_helpers import write_skill

from mycode_core.config import load_settings
from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn, write_script


def _skills(count: int, words: int = 30, prefix: str = "skill") -> list[Skill]:
    return [
        Skill(
            name=f"{prefix}-{index:03d}",
            description=" ".join(f"word{index}-{n}" for n in range(words)),
            folder=Path(f"/skills/{prefix}-{index:03d}"),
            source="user",
        )
        for index in range(count)
    ]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_within_budget_the_listing_is_unchanged() -> None:
    skills = _skills(5)
    rendered = render(skills, Budget(100_000, "test"))
    assert rendered.text == listing(skills) and not rendered.cut and rendered.notice() is None
    assert render(_skills(600), Budget(None, "off")).text == listing(_skills(600))


@pytest.mark.parametrize("chars", [0, 150, 400, 1_000, 2_500, 5_000, 9_000, 20_000])
def test_the_listing_never_exceeds_its_budget(chars: int) -> None:
    skills = _skills(120)
    rendered = render(skills, Budget(chars, "test"))
    assert len(rendered.text) <= max(chars, len(listing([])) + len(CUT_NOTE) + 200)
    if chars >= 1_000:
        assert len(rendered.text) <= chars
    counts = rendered.full + rendered.shortened + rendered.names_only + rendered.omitted
    assert counts == 120 and rendered.cut


def test_descriptions_are_shortened_first_the_longest_first() -> None:
    short = Skill(name="aaa-short", description="Tiny one.", folder=Path("/s"), source="user")
    skills = [short, *_skills(20, words=40)]
    rendered = render(skills, Budget(len(listing(skills)) // 2, "test"))
    assert rendered.shortened == 20 and rendered.full == 1 and rendered.names_only == 0
    lines = _lines(rendered.text)
    assert "- aaa-short: Tiny one." in lines  # a short description keeps every word
    cut = [line for line in lines if line.startswith("- skill-")]
    assert len(cut) == 20 and all(line.endswith("…") and ": " in line for line in cut)
    assert CUT_NOTE in rendered.text


def test_then_names_only_keeping_descriptions_for_the_first_in_precedence() -> None:
    """The project's skills (first in precedence) keep a description longest; the lines
    stay sorted by name."""
    skills = [*_skills(3, prefix="zz-project"), *_skills(100, prefix="aa-plugin")]
    names_only = sum(len(s.name) + 3 for s in skills)
    budget = len(listing([])) + len(CUT_NOTE) + names_only + 3 * (MIN_DESCRIPTION + 2) + 10
    rendered = render(skills, Budget(budget, "test"))
    lines = _lines(rendered.text)
    assert lines == sorted(lines) and len(lines) == 103 and rendered.omitted == 0
    described = [line for line in lines if ": " in line]
    assert [line.split(":")[0] for line in described] == [f"- zz-project-{i:03d}" for i in range(3)]
    assert all(len(line.split(": ", 1)[1]) <= MIN_DESCRIPTION for line in described)
    assert rendered.names_only == 100


def test_at_last_the_rest_is_left_out_with_a_count() -> None:
    skills = [*_skills(10, prefix="project"), *_skills(500, prefix="plugin")]
    rendered = render(skills, Budget(3_000, "test"))
    lines = _lines(rendered.text)
    assert all(": " not in line for line in lines[:-1])
    assert "- project-000" in lines and "- plugin-499" not in lines
    assert lines[-1].startswith(f"- … and {rendered.omitted} more skills")
    assert "load_skill" in lines[-1]
    assert rendered.names_only + rendered.omitted == 510 and rendered.omitted > 300
    notice = rendered.notice()
    assert notice is not None and f"{rendered.omitted} left out" in notice


class _Settings:
    def __init__(self, table: dict[str, Any], window: int | None = None) -> None:
        self.table = table
        if window is not None:
            self.context_window = window

    def section(self, name: str) -> dict[str, Any]:
        return self.table if name == "skills" else {}


def test_the_budget_is_a_share_of_the_window_or_characters() -> None:
    assert listing_budget(_Settings({})).chars == 128_000 * 2 // 100 * 4
    wide = listing_budget(_Settings({}, window=1_000_000))
    assert wide.chars == 80_000 and "1,000,000-token" in wide.basis
    assert listing_budget(_Settings({"listing_budget": "5%"}, window=100_000)).chars == 20_000
    assert listing_budget(_Settings({"listing_budget": 1234})).chars == 1234
    assert listing_budget(_Settings({"listing_budget": "off"})).chars is None


def test_the_core_settings_give_the_configured_window(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    home.mkdir()
    (home / "config.toml").write_text("context_window = 50000\n", "utf-8")
    assert listing_budget(load_settings(workspace, home, {})).chars == 4_000


# ------------------------------------------------------------------ as a user runs it


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    workspace, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for path in (workspace, home, user):
        path.mkdir()
    for index in range(60):
        write_skill(
            home / "skills",
            f"tool-{index:02d}",
            description=f"Handles chore number {index}: " + "checks, fixes and reports. " * 6,
            body=f"BODY OF tool-{index:02d}\n",
        )
    write_skill(workspace / ".agents" / "skills", "own-skill", description="The repo's own.")
    return {"workspace": workspace, "home": home, "user": user}


def _run(args: list[str], dirs: dict[str, Path]) -> CliResult:
    return run_cli(args, cwd=dirs["workspace"], home=dirs["home"], env={"HOME": str(dirs["user"])})


def _config(dirs: dict[str, Path], text: str) -> None:
    (dirs["home"] / "config.toml").write_text(text, "utf-8")


def _budget_notices(result: CliResult) -> list[str]:
    return [
        str(e["message"])
        for e in result.of_type("notice")
        if "skills listing over its budget" in str(e["message"])
    ]


def test_a_run_lists_within_the_budget_and_loads_a_left_out_skill(
    dirs: dict[str, Path],
) -> None:
    """With a budget too small for every name, the model sees the project's skill and a
    count; it loads a skill it was not shown, by name. One notice, in the first run only."""
    _config(dirs, "[skills]\nlisting_budget = 700\n")
    load = {"name": "load_skill", "arguments": {"name": "tool-59"}, "id": "c1"}
    with FakeOpenAIServer([turn(tool_calls=[load]), turn("done")]) as server:
        run = _run(
            [
                *server.cli_args("go", output_format="stream-json"),
                "--completion-policy",
                "off",
            ],
            dirs,
        )
        assert run.rc == 0, run.stderr
        system = str(server.chat_requests[0].messages[0]["content"])
        answer = server.chat_requests[1].messages[-1]
    section = system[system.index("Skills are folders") :]
    assert "- own-skill" in section and "- tool-59" not in section
    assert "more skills not listed here" in section
    assert len(section.split("\n\n# ")[0]) <= 700
    assert "BODY OF tool-59" in str(answer["content"])
    assert len(_budget_notices(run)) == 1
    with FakeOpenAIServer([turn("done")]) as server:
        again = _run(
            [*server.cli_args("go", output_format="stream-json"), "--completion-policy", "off"],
            dirs,
        )
    assert again.rc == 0 and _budget_notices(again) == []  # not at every run
    _config(dirs, "[skills]\nlisting_budget = 900\n")  # another cut: told again
    with FakeOpenAIServer([turn("done")]) as server:
        changed = _run(
            [*server.cli_args("go", output_format="stream-json"), "--completion-policy", "off"],
            dirs,
        )
    assert len(_budget_notices(changed)) == 1


def test_the_window_sets_the_budget_in_a_run(dirs: dict[str, Path]) -> None:
    """2% of a configured 40,000-token window: 3,200 characters, descriptions shortened."""
    _config(dirs, "context_window = 40000\n")
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args("go"), "--completion-policy", "off"], dirs)
        assert run.rc == 0, run.stderr
        system = str(server.chat_requests[0].messages[0]["content"])
    section = system[system.index("Skills are folders") :].split("\n\n# ")[0]
    assert CUT_NOTE in section and len(section) <= 3_200
    assert "- tool-00: Handles chore number 0" in section and "…" in section


def test_the_servers_window_known_from_an_earlier_run_sets_the_budget(
    dirs: dict[str, Path],
) -> None:
    """No window configured: the one an earlier run learned from this server (the core's
    cache, ``context.context_window()``) sizes the listing from the first request, not the
    128,000-token default."""
    from mycode_core.providers.discovery import remember_window

    with FakeOpenAIServer([turn("done")], model="m") as server:
        remember_window(dirs["home"], server.base_url, "m", 40_000)
        run = _run([*server.cli_args("go", model="m"), "--completion-policy", "off"], dirs)
        assert run.rc == 0, run.stderr
        system = str(server.chat_requests[0].messages[0]["content"])
    section = system[system.index("Skills are folders") :].split("\n\n# ")[0]
    assert CUT_NOTE in section and len(section) <= 3_200


def test_mycode_skills_still_shows_everything(dirs: dict[str, Path]) -> None:
    _config(dirs, "[skills]\nlisting_budget = 700\n")
    data = json.loads(_run(["skills", "--json"], dirs).stdout)
    assert len(data["skills"]) == 61
    assert data["listing"]["budget"] == 700 and data["listing"]["omitted"] > 0
    assert data["listing"]["skills"] == 61
    text = _run(["skills"], dirs)
    assert text.stdout.count("\n") == 61 and "note: skills listing over its budget" in text.stderr
    idle = write_script(dirs["user"] / "idle.json", [])
    slash = _run(["-p", "/skills", "--model", idle], dirs)
    assert slash.rc == 0 and "tool-59 (user)" in slash.stdout
    assert "note: skills listing over its budget" in slash.stdout


def test_a_session_from_the_index_does_not_import_the_parser(dirs: dict[str, Path]) -> None:
    """Parsing (YAML, the rules) is for new or changed files only: once indexed, a session
    lists and budgets its skills without importing it."""
    code = (
        "import sys, os\n"
        "from pathlib import Path\n"
        "from mycode_skills.discovery import Catalog, default_locations\n"
        "from mycode_skills.state import index_file\n"
        "from mycode_skills.budget import listing_budget, render\n"
        "home = Path(os.environ['MYCODE_HOME']); ws = Path(sys.argv[1])\n"
        "catalog = Catalog(default_locations(ws, home, ws), index_file=index_file(home))\n"
        "snapshot = catalog.refresh()\n"
        "render(list(snapshot.skills.values()), listing_budget(None))\n"
        "print(catalog.parses, 'mycode_skills.parse' in sys.modules, 'yaml' in sys.modules)\n"
    )
    env = {**os.environ, "MYCODE_HOME": str(dirs["home"]), "HOME": str(dirs["user"])}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(dirs["workspace"])],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["61", "True", "True"] and runs[1] == ["0", "False", "False"]


def test_a_bad_budget_is_a_configuration_error(dirs: dict[str, Path]) -> None:
    _config(dirs, '[skills]\nlisting_budget = "lots"\n')
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args("go")], dirs)
    assert run.rc == 2 and "listing_budget" in run.stderr
