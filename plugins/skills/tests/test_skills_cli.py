"""``mycode skills`` and a disabled skills plugin, as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skill_helpers import write_skill

from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn, write_script


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    workspace, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for path in (workspace, home, user):
        path.mkdir()
    write_skill(workspace / ".agents" / "skills", "project-skill", description="From the repo.")
    write_skill(
        home / "skills",
        "home-skill",
        description="From MYCODE_HOME.",
        body="Do the home thing.\n",
        files={"scripts/run.sh": "echo hi\n"},
        allowed_tools="Read Bash(git:*)",
    )
    write_skill(home / "skills", "Broken_Name")
    return {"workspace": workspace, "home": home, "user": user}


def _run(args: list[str], dirs: dict[str, Path], **env: str) -> CliResult:
    return run_cli(
        args, cwd=dirs["workspace"], home=dirs["home"], env={"HOME": str(dirs["user"]), **env}
    )


def test_list_json(dirs: dict[str, Path]) -> None:
    result = _run(["skills", "--json"], dirs)
    assert result.rc == 0, result.stderr
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["skills"]] == ["home-skill", "project-skill"]
    assert data["skills"][0]["source"] == "user"
    assert data["skills"][0]["allowed_tools"] == ["Read", "Bash(git:*)"]
    assert len(data["problems"]) == 1 and "Broken_Name" in data["problems"][0]


def test_list_text_and_problems_on_stderr(dirs: dict[str, Path]) -> None:
    result = _run(["skills"], dirs)
    assert result.rc == 0
    assert "project-skill" in result.stdout and "From the repo." in result.stdout
    assert "Broken_Name" in result.stderr and "name-characters" in result.stderr


def test_show(dirs: dict[str, Path]) -> None:
    result = _run(["skills", "show", "home-skill"], dirs)
    assert result.rc == 0, result.stderr
    assert "Do the home thing." in result.stdout and "scripts/run.sh" in result.stdout
    as_json = json.loads(_run(["skills", "show", "home-skill", "--json"], dirs).stdout)
    assert as_json["files"] == ["SKILL.md", "scripts/run.sh"]
    assert as_json["body"].strip() == "Do the home thing."


def test_show_unknown_names_the_available(dirs: dict[str, Path]) -> None:
    result = _run(["skills", "show", "nope"], dirs)
    assert result.rc == 2
    assert "unknown skill 'nope'" in result.stderr
    assert "home-skill, project-skill" in result.stderr
    assert "Traceback" not in result.stderr


def test_disabled_plugin_leaves_no_trace(dirs: dict[str, Path]) -> None:
    env = {"MYCODE_DISABLE_PLUGINS": "skills"}
    with FakeOpenAIServer([turn("hello")]) as server:
        result = _run(
            server.cli_args("hi", output_format="stream-json"),
            dirs,
            **env,
        )
        assert result.rc == 0, result.stderr
        body = server.chat_requests[0].body
    system = result.of_type("system")[0]
    assert "skills" not in system["plugins"] and "load_skill" not in system["tools"]
    text = json.dumps(body)
    assert "home-skill" not in text and "# Skills" not in text
    assert not [e for e in result.of_type("notice") if "skill" in e["message"]]
    listing = _run(["skills", "--json"], dirs, **env)
    assert "home-skill" not in listing.stdout


def test_enabled_run_lists_skills_and_reports_the_invalid_one(dirs: dict[str, Path]) -> None:
    with FakeOpenAIServer([turn("hello")]) as server:
        result = _run(
            server.cli_args("hi", output_format="stream-json"),
            dirs,
        )
        assert result.rc == 0, result.stderr
        system_prompt = server.chat_requests[0].messages[0]["content"]
    assert "- home-skill: From MYCODE_HOME." in system_prompt
    assert "- project-skill: From the repo." in system_prompt
    assert "Do the home thing." not in system_prompt
    notices = [e["message"] for e in result.of_type("notice")]
    assert sum("Broken_Name" in n for n in notices) == 1


def test_print_mode_slash_commands(dirs: dict[str, Path], tmp_path: Path) -> None:
    idle = write_script(tmp_path / "idle.json", [])
    listed = _run(["-p", "/skills", "--model", idle], dirs)
    assert listed.rc == 0, listed.stderr
    assert "home-skill (user): From MYCODE_HOME." in listed.stdout
    with FakeOpenAIServer([turn("done")]) as server:
        forced = _run(
            [*server.cli_args("/skill:home-skill tidy the repo"), "--completion-policy", "off"],
            dirs,
        )
        assert forced.rc == 0, forced.stderr
        user = server.chat_requests[0].messages[-1]["content"]
    assert "Do the home thing." in user and user.startswith("tidy the repo")
    assert "- scripts/run.sh" in user


def test_folder_names_setting_from_config(dirs: dict[str, Path]) -> None:
    """By default a display name (Claude Code's ``Display Named``, which Claude Code and
    Codex load) gives way to its valid folder name, with one warning — agentskills.io's guide
    for clients relaxes the naming rules; ``folder_names = false`` applies them as written."""
    write_skill(dirs["home"] / "skills", "display-named", front={"name": "Display Named"})
    relaxed = json.loads(_run(["skills", "--json"], dirs).stdout)
    assert "display-named" in [s["name"] for s in relaxed["skills"]]
    assert "Broken_Name" not in [s["name"] for s in relaxed["skills"]]  # its folder is invalid
    assert any("'display-named'" in p and "folder's name" in p for p in relaxed["problems"])
    (dirs["home"] / "config.toml").write_text("[skills]\nfolder_names = false\n", "utf-8")
    strict = json.loads(_run(["skills", "--json"], dirs).stdout)
    assert "display-named" not in [s["name"] for s in strict["skills"]]


def test_a_name_differing_from_its_folder_is_listed_and_loads(dirs: dict[str, Path]) -> None:
    """A collection copied as is (folder ``react-patterns/`` holding ``acme-react-patterns``)
    is listed under its name with one warning, and ``load_skill`` loads it — not dropped."""
    write_skill(
        dirs["workspace"] / ".claude" / "skills",
        "react-patterns",
        name="acme-react-patterns",
        body="Prefer composition.\n",
    )
    listed = _run(["skills"], dirs)
    assert listed.rc == 0, listed.stderr
    assert any(line.startswith("acme-react-patterns ") for line in listed.stdout.splitlines())
    warned = [line for line in listed.stderr.splitlines() if "acme-react-patterns" in line]
    assert len(warned) == 1 and "[rule name-folder]" in warned[0]
    script = write_script(
        dirs["workspace"].parent / "turns.json",
        [{"tool_calls": [{"name": "load_skill", "arguments": {"name": "acme-react-patterns"}}]}],
    )
    run = _run(["-p", "go", "--model", script, "--output-format", "stream-json"], dirs)
    assert run.rc == 0, run.stderr
    loaded = run.of_type("tool_result")[0]
    assert not loaded["is_error"] and "Prefer composition." in str(loaded["content"])


def test_a_description_with_a_bare_colon_is_listed(dirs: dict[str, Path]) -> None:
    """``description: Use when: ...`` (not valid YAML, accepted by other clients) is listed
    with its description, and no warning — also when an index from before is there."""
    write_skill(
        dirs["workspace"] / ".agents" / "skills",
        "ui-prompting",
        raw_front=(
            "name: ui-prompting\ndescription: Use when: you prompt for UI. Covers: spacing.\n"
        ),
    )
    for _ in range(2):  # the second run reads the parsed index
        result = _run(["skills", "--json"], dirs)
        assert result.rc == 0, result.stderr
        data = json.loads(result.stdout)
        rows = {row["name"]: row for row in data["skills"]}
        assert (
            rows["ui-prompting"]["description"] == "Use when: you prompt for UI. Covers: spacing."
        )
        assert not any("ui-prompting" in problem for problem in data["problems"])


def test_a_skill_without_a_name_is_listed_under_its_folder(dirs: dict[str, Path]) -> None:
    """A ``SKILL.md`` with a description but no ``name`` (Claude Code reads it under its
    folder's name) is listed so, with exactly one warning; an index from before is no
    obstacle (the second run reads it)."""
    write_skill(
        dirs["workspace"] / ".claude" / "skills",
        "changelog-writer",
        raw_front="description: Writes the changelog entry for a change.\n",
    )
    for _ in range(2):
        listed = _run(["skills", "--json"], dirs)
        assert listed.rc == 0, listed.stderr
        data = json.loads(listed.stdout)
        rows = {row["name"]: row for row in data["skills"]}
        assert rows["changelog-writer"]["description"] == "Writes the changelog entry for a change."
        warned = [p for p in data["problems"] if "changelog-writer" in p]
        assert len(warned) == 1 and "[rule name-required]" in warned[0]
        assert "not loaded" not in warned[0]


def test_a_lowercase_skill_md_is_listed_and_shown(dirs: dict[str, Path]) -> None:
    """A folder with ``skill.md`` and no ``SKILL.md`` — also when a new run reads the index."""
    folder = write_skill(
        dirs["workspace"] / ".agents" / "skills", "lower-file", body="From the lowercase file.\n"
    )
    (folder / "SKILL.md").rename(folder / "skill.md")
    for _ in range(2):
        shown = _run(["skills", "show", "lower-file", "--json"], dirs)
        assert shown.rc == 0, shown.stderr
        data = json.loads(shown.stdout)
        assert data["body"] == "From the lowercase file." and data["files"] == ["skill.md"]


def _first_user_message(dirs: dict[str, Path], prompt: str, *extra: str) -> str:
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args(prompt), "--completion-policy", "off", *extra], dirs)
        assert run.rc == 0, run.stderr
        return str(server.chat_requests[0].messages[-1]["content"])


def test_a_skills_folder_linked_to_another_lists_each_skill_once(dirs: dict[str, Path]) -> None:
    """A repository sharing its skills with Claude Code and Codex links ``.claude/skills`` to
    ``../.agents/skills``: every skill was also found a second time, and each run warned
    that the ``.claude`` one was ignored for the ``.agents`` one — the same folder."""
    (dirs["workspace"] / ".claude").mkdir()
    (dirs["workspace"] / ".claude" / "skills").symlink_to("../.agents/skills")
    result = _run(["skills", "--json"], dirs)
    assert result.rc == 0, result.stderr
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["skills"]] == ["home-skill", "project-skill"]
    assert not [p for p in data["problems"] if "project-skill" in p]


def test_slash_skill_name_as_claude_code_users_type_it(dirs: dict[str, Path]) -> None:
    """``mycode -p "/home-skill tidy the repo"`` loads the skill as ``/skill:home-skill``
    does; ``/project-skill`` alone too."""
    user = _first_user_message(dirs, "/home-skill tidy the repo")
    assert user.startswith("tidy the repo") and "Do the home thing." in user
    assert "- scripts/run.sh" in user
    alone = _first_user_message(dirs, "/project-skill")
    assert alone.startswith("Apply this skill") and '<skill name="project-skill"' in alone


def test_slash_skill_name_yields_to_every_other_command(dirs: dict[str, Path]) -> None:
    """A skill named like a command — a workspace's own command, a plugin folder's command,
    one of the session's built-ins — is reached as ``/skill:NAME`` only; ``/NAME`` is the
    command (a built-in's name is no plugin command in ``-p``: it is refused, exit 2)."""
    skills = dirs["home"] / "skills"
    for name in ("review-pr", "ship", "mode"):
        write_skill(skills, name, body=f"SKILL BODY OF {name}\n")
    commands = dirs["workspace"] / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review-pr.md").write_text("OWN COMMAND: review $ARGUMENTS\n", "utf-8")
    plugin = dirs["workspace"].parent / "tools-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}', "utf-8")
    (plugin / "commands").mkdir()
    (plugin / "commands" / "ship.md").write_text("PLUGIN COMMAND: ship $ARGUMENTS\n", "utf-8")
    with_plugin = ("--plugin-dir", str(plugin))
    assert _first_user_message(dirs, "/review-pr now", *with_plugin) == "OWN COMMAND: review now"
    assert _first_user_message(dirs, "/ship it", *with_plugin) == "PLUGIN COMMAND: ship it"
    assert _first_user_message(dirs, "/tools:ship it", *with_plugin) == "PLUGIN COMMAND: ship it"
    idle = write_script(dirs["workspace"].parent / "idle.json", [])
    refused = _run(["-p", "/mode plan", "--model", idle, *with_plugin], dirs)
    assert refused.rc == 2 and "interactive session" in refused.stderr
    for name in ("review-pr", "ship", "mode"):
        forced = _first_user_message(dirs, f"/skill:{name} go", *with_plugin)
        assert forced.startswith("go") and f"SKILL BODY OF {name}" in forced


def test_a_long_description_and_a_mapping_compatibility_still_list(
    dirs: dict[str, Path],
) -> None:
    """Shapes real Claude Code plugins publish: a description over 1024 characters, a
    ``compatibility`` written as a mapping of requirements. Both load, each with a warning."""
    skills = dirs["workspace"] / ".claude" / "skills"
    write_skill(skills, "long-one", description="Use when " + "this or that, " * 90)
    write_skill(skills, "needs-gh", compatibility={"requires": [{"cli": "gh"}]})
    data = json.loads(_run(["skills", "--json"], dirs).stdout)
    rows = {s["name"]: s for s in data["skills"]}
    assert "long-one" in rows and rows["needs-gh"]["compatibility"] is None
    assert any("'long-one'" in p and "description-length" in p for p in data["problems"])
    assert any("'needs-gh'" in p and "compatibility-type" in p for p in data["problems"])


def test_a_plugin_skill_answers_to_plugin_colon_name(dirs: dict[str, Path]) -> None:
    """Claude Code users invoke a plugin's skill as ``/plugin:skill`` (``/superpowers:
    brainstorming``); that went to the model as plain text. A command of the plugin with that
    name still wins."""
    plugin = dirs["workspace"].parent / "tools-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}', "utf-8")
    write_skill(plugin / "skills", "release-notes", body="SKILL BODY OF release-notes\n")
    write_skill(plugin / "skills", "ship", body="SKILL BODY OF ship\n")
    (plugin / "commands").mkdir()
    (plugin / "commands" / "ship.md").write_text("PLUGIN COMMAND: ship $ARGUMENTS\n", "utf-8")
    with_plugin = ("--plugin-dir", str(plugin))
    loaded = _first_user_message(dirs, "/tools:release-notes for 2.0", *with_plugin)
    assert loaded.startswith("for 2.0") and "SKILL BODY OF release-notes" in loaded
    assert _first_user_message(dirs, "/tools:ship it", *with_plugin) == "PLUGIN COMMAND: ship it"


def test_claude_skill_dir_in_a_skill_is_its_folder(dirs: dict[str, Path]) -> None:
    """Claude Code fills in ``${CLAUDE_SKILL_DIR}`` in SKILL.md (``[Scan](${CLAUDE_SKILL_DIR}/
    jobs/scan.md)``, as the official claude-security skill links its job files); the model got
    the placeholder, a path no tool can open."""
    folder = write_skill(
        dirs["home"] / "skills",
        "menu",
        body="Pick one: [Scan](${CLAUDE_SKILL_DIR}/jobs/scan.md)\n",
        files={"jobs/scan.md": "Scan it.\n"},
    )
    loaded = _loaded_by_the_model(dirs, "menu")
    assert f"[Scan]({folder.resolve()}/jobs/scan.md)" in loaded["content"]
    assert "CLAUDE_SKILL_DIR" not in loaded["content"]


def test_plugin_root_in_a_plugin_skill_is_the_plugins_folder(dirs: dict[str, Path]) -> None:
    """Claude Code fills in ``${CLAUDE_PLUGIN_ROOT}`` in a plugin skill's text (``python3
    ${CLAUDE_PLUGIN_ROOT}/shared/check.py``, as many published plugin skills run their
    scripts): the model got the placeholder, its command was refused as unreadable and the
    plugin's files beside the skill folder were outside what ``read_file`` may open."""
    plugin = dirs["workspace"].parent / "kit-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}', "utf-8")
    (plugin / "shared").mkdir()
    (plugin / "shared" / "guide.md").write_text("THE SHARED GUIDE\n", "utf-8")
    body = "Read ${CLAUDE_PLUGIN_ROOT}/shared/guide.md first.\n"
    write_skill(plugin / "skills", "check", body=body)
    root = plugin.resolve()
    turns = [
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "check"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{root}/shared/guide.md"}}]},
    ]
    model = write_script(dirs["workspace"].parent / "s.json", [*turns, {"content": "ok"}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json"]
    run = _run([*args, "--plugin-dir", str(plugin), "--completion-policy", "off"], dirs)
    assert run.rc == 0, run.stderr
    loaded, read = run.of_type("tool_result")
    assert f"Read {root}/shared/guide.md first." in loaded["content"]
    assert not read["is_error"] and "THE SHARED GUIDE" in read["content"], read["content"]


def test_arguments_in_a_skill_run_as_a_command_are_its_task(dirs: dict[str, Path]) -> None:
    """A skill invoked as a command (``/triage 42 urgent``) gets ``$ARGUMENTS`` filled in, as
    Claude Code does for its command-style skills; the model saw the placeholder."""
    write_skill(dirs["home"] / "skills", "triage", body="Triage issue: $ARGUMENTS.\n")
    user = _first_user_message(dirs, "/triage 42 urgent")
    assert "Triage issue: 42 urgent." in user and "$ARGUMENTS" not in user


def test_a_skills_positional_and_named_arguments_and_session_id_are_filled_in(
    dirs: dict[str, Path],
) -> None:
    """Claude Code's skill arguments: ``$0``/``$ARGUMENTS[N]`` from 0 (quotes keep words
    together), ``$name`` for a name in ``arguments``, ``${CLAUDE_SESSION_ID}``: the model saw
    them as written."""
    body = "Move $0 from $ARGUMENTS[1] to $2; owner $owner; log ${CLAUDE_SESSION_ID}.\n"
    write_skill(dirs["home"] / "skills", "move", body=body, arguments="part from to owner")
    user = _first_user_message(dirs, '/move "Search Bar" React Vue ann')
    assert "Move Search Bar from React to Vue; owner ann; log " in user, user
    assert "${CLAUDE_SESSION_ID}" not in user and "$ARGUMENTS" not in user


def test_plugin_root_in_a_plugin_skills_allowed_tools_is_its_folder(
    dirs: dict[str, Path],
) -> None:
    """Claude Code fills in ``${CLAUDE_PLUGIN_ROOT}`` (and ``${CLAUDE_SKILL_DIR}``) in a plugin
    skill's ``allowed-tools``; unfilled, the rule for the skill's own script matched nothing
    and the script was refused while the skill was active."""
    plugin = dirs["workspace"].parent / "sec-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "sec"}', "utf-8")
    allowed = [
        "Bash(sh ${CLAUDE_PLUGIN_ROOT}/bin/report.sh:*)",
        "Bash(cat ${CLAUDE_SKILL_DIR}/x:*)",
    ]
    write_skill(plugin / "skills", "audit", front={"allowed-tools": allowed})
    root, folder = plugin.resolve(), (plugin / "skills" / "audit").resolve()
    calls = [
        {"name": "run_command", "arguments": {"command": f"sh {root}/bin/report.sh --all"}},
        {"name": "run_command", "arguments": {"command": f"cat {folder}/x"}},
        {"name": "run_command", "arguments": {"command": "sh other.sh"}},
    ]
    model = write_script(dirs["workspace"].parent / "s.json", [{"tool_calls": calls}])
    args = ["-p", "/skill:audit", "--model", model, "--output-format", "stream-json"]
    run = _run([*args, "--plugin-dir", str(plugin), "--completion-policy", "off"], dirs)
    assert run.rc == 0, run.stderr
    decisions = [event["decision"] for event in run.of_type("permission")]
    assert decisions == ["allow", "allow", "deny"]


NO_FRONT = (
    "# Notes helper\n\nKeeps meeting notes tidy.\nUse when asked for notes.\n\n## Steps\n1. Go.\n"
)


def _plain_skill(parent: Path, name: str) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(NO_FRONT, encoding="utf-8")
    return folder


def test_a_skill_without_front_matter_is_listed_and_loads(dirs: dict[str, Path]) -> None:
    """Claude Code reads a ``SKILL.md`` without front matter (name = folder, description =
    first paragraph): in the project (one ``frontmatter`` warning) and in a Claude Code plugin
    folder (quietly); an Agent Plugins folder refuses it (its §7.1). The model sees it."""
    _plain_skill(dirs["workspace"] / ".claude" / "skills", "notes-helper")
    cc = dirs["workspace"].parent / "cc-plugin"
    (cc / ".claude-plugin").mkdir(parents=True)
    (cc / ".claude-plugin" / "plugin.json").write_text('{"name": "cc"}', "utf-8")
    _plain_skill(cc / "skills", "cc-notes")
    ap = dirs["workspace"].parent / "ap-plugin"
    ap.mkdir()
    schema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
    (ap / "plugin.json").write_text(json.dumps({"$schema": schema, "name": "ap"}), "utf-8")
    _plain_skill(ap / "skills", "ap-notes")
    folders = ("--plugin-dir", str(cc), "--plugin-dir", str(ap))
    for _ in range(2):  # the second run reads the index
        listed = _run(["skills", "--json", *folders], dirs)
        assert listed.rc == 0, listed.stderr
        data = json.loads(listed.stdout)
        rows = {row["name"]: row for row in data["skills"]}
        assert (
            rows["notes-helper"]["description"]
            == "Keeps meeting notes tidy. Use when asked for notes."
        )
        assert "cc-notes" in rows and "ap-notes" not in rows
        mine = [p for p in data["problems"] if "notes-helper" in p]
        assert len(mine) == 1 and "[rule frontmatter]" in mine[0] and "not loaded" not in mine[0]
        assert not [p for p in data["problems"] if "cc-notes" in p]
        refused = [p for p in data["problems"] if "ap-notes" in p]
        assert len(refused) == 1 and "not loaded" in refused[0]
    shown = json.loads(_run(["skills", "show", "notes-helper", "--json"], dirs).stdout)
    assert shown["body"].startswith("# Notes helper") and "1. Go." in shown["body"]
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args("hi"), "--completion-policy", "off"], dirs)
        assert run.rc == 0, run.stderr
        system = str(server.chat_requests[0].messages[0]["content"])
    assert "- notes-helper: Keeps meeting notes tidy. Use when asked for notes." in system


def test_a_skills_inline_commands_run_before_its_text_is_sent(dirs: dict[str, Path]) -> None:
    """Claude Code renders a skill's ``!`cmd``` (after its arguments) when it is invoked: the
    model sees what the command printed, not the command."""
    body = "Issue state: !`echo state-of-$0`\n\n```!\necho from a block\n```\n"
    write_skill(dirs["home"] / "skills", "issue", body=body)
    user = _first_user_message(dirs, "/issue 42")
    assert "Issue state: state-of-42" in user and "from a block" in user, user
    assert "!`" not in user and "```!" not in user


def _loaded_by_the_model(dirs: dict[str, Path], name: str, **extra: str) -> dict[str, Any]:
    """The ``tool_result`` of a run whose model calls ``load_skill(name, **extra)``."""
    call = {"name": "load_skill", "arguments": {"name": name, **extra}}
    model = write_script(dirs["workspace"].parent / "s.json", [{"tool_calls": [call]}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json"]
    run = _run([*args, "--completion-policy", "off"], dirs)
    assert run.rc == 0, run.stderr
    (loaded,) = run.of_type("tool_result")
    return loaded


def test_the_model_passes_a_skill_its_arguments(dirs: dict[str, Path]) -> None:
    """Claude Code's Skill tool takes ``args``: ``$ARGUMENTS`` and ``$0`` are filled from them."""
    write_skill(dirs["home"] / "skills", "inspect", body="Inspect $ARGUMENTS, first $0.\n")
    loaded = _loaded_by_the_model(dirs, "inspect", args="src tests")
    assert not loaded["is_error"] and "Inspect src tests, first src." in loaded["content"]
    assert "Inspect $ARGUMENTS" in _loaded_by_the_model(dirs, "inspect")["content"]


def test_a_skill_loaded_by_the_model_runs_its_inline_commands(dirs: dict[str, Path]) -> None:
    write_skill(dirs["home"] / "skills", "status", body="Branch facts: !`echo printed-here`\n")
    loaded = _loaded_by_the_model(dirs, "status")
    assert not loaded["is_error"] and "Branch facts: printed-here" in loaded["content"]


def test_a_skill_whose_inline_command_is_denied_is_not_loaded(dirs: dict[str, Path]) -> None:
    """A command the user's rules deny refuses the whole skill: nothing ran, nothing loaded."""
    (dirs["home"] / "config.toml").write_text(
        '[permissions]\ndeny = ["run_command(touch:*)"]\n', "utf-8"
    )
    marker = dirs["workspace"] / "ran"
    body = f"First !`echo fine` then !`touch {marker}`\n"
    write_skill(dirs["home"] / "skills", "sneaky", body=body)
    loaded = _loaded_by_the_model(dirs, "sneaky")
    assert loaded["is_error"] and "was not loaded" in loaded["content"], loaded["content"]
    assert f"touch {marker}" in loaded["content"] and not marker.exists()


def test_inline_commands_shown_as_examples_do_not_run(dirs: dict[str, Path]) -> None:
    """A skill that teaches the syntax (plugin-dev's ``command-development``) shows
    ``!`cmd``` in fenced code and code spans: Claude Code runs those too (its users' bug
    reports), and one refused example kept the whole skill from loading. Here they stay text."""
    marker = dirs["workspace"] / "example-ran"
    body = (
        "Live: !`echo live-output`\n\n"
        f"```markdown\nFiles: !`touch {marker}`\n```\n\n"
        f"~~~\n!`touch {marker}`\n~~~\n\n"
        "Mark a command with `!`, `$` or `@`.\n"
        "```code in a line``` then !`echo after-inline-code`\n"
    )
    write_skill(dirs["home"] / "skills", "teach", body=body)
    loaded = _loaded_by_the_model(dirs, "teach")
    content = loaded["content"]
    assert not loaded["is_error"] and "Live: live-output" in content, content
    assert f"Files: !`touch {marker}`" in content and "Mark a command with `!`, `$`" in content
    assert "``` then after-inline-code" in content
    assert not marker.exists()


def test_a_skill_the_user_may_not_invoke_has_no_command(dirs: dict[str, Path]) -> None:
    """Claude Code's ``user-invocable: false``: background knowledge the model loads; the
    user gets no ``/name`` for it, and ``/skill NAME`` refuses it."""
    write_skill(dirs["home"] / "skills", "house-style", body="Use tabs.\n", user_invocable=False)
    assert "Use tabs." in _loaded_by_the_model(dirs, "house-style")["content"]
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args("/skill house-style"), "--completion-policy", "off"], dirs)
        assert run.rc == 0, run.stderr
        assert not server.chat_requests  # nothing was sent
    assert "user-invocable is false" in run.stdout + run.stderr
    with FakeOpenAIServer([turn("done")]) as server:
        run = _run([*server.cli_args("/house-style"), "--completion-policy", "off"], dirs)
        assert not server.chat_requests  # not a command, and not sent as text either
    assert run.rc == 2 and "Unknown command /house-style" in run.stderr
    (row,) = [r for r in json.loads(_run(["skills", "--json"], dirs).stdout)["skills"]
              if r["name"] == "house-style"]  # fmt: skip
    assert row["user_invocable"] is False and row["model_invocable"] is True
    assert "(no /NAME: the model's only)" in _run(["skills"], dirs).stdout
    shown = _run(["skills", "show", "house-style"], dirs).stdout
    assert "invoked by: the model (load_skill)" in shown
