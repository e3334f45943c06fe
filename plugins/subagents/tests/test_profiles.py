"""Agent profiles: parsing Claude Code's and mycode's files, folders, notices."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_subagents.profiles import (
    ProfileError,
    load_profiles,
    parse_profile,
    profile_folders,
)
from mycode_subagents.settings import SubagentSettings, child_model
from sa_helpers import answer, call, calls, delegate, requests_for, run, tool_names, workspace

from mycode_core.testing import FakeOpenAIServer


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


LIST_TOOLS = """---
name: checker
description: Checks things carefully.
tools: ["Read", "Grep"]
model: haiku
---
Check the things you are asked about.
"""

STRING_TOOLS = """---
name: fixer
description: "Fixes: small bugs"
tools: Read, Edit, Bash(git status:*), run_command
---
Fix it.
"""

# a description over several lines with unquoted colons, as Claude Code's own plugins write them
LENIENT = """---
name: scout
description: Use this agent to scout a codebase. Examples:

<example>
Context: the user wants an overview
user: "what is in here?"
assistant: "I will send the scout."
</example>

model: inherit
color: green
tools: Glob, Grep, Read
---
You scout.
"""


def test_a_list_of_claude_code_tool_names_maps_to_mycode_tools(tmp_path: Path) -> None:
    profile = parse_profile(_write(tmp_path / "checker.md", LIST_TOOLS))
    assert profile.name == "checker"
    assert profile.description == "Checks things carefully."
    assert profile.tool_names() == ["read_file", "grep"]
    assert profile.instructions == "Check the things you are asked about."
    assert profile.model == "haiku"


def test_a_comma_separated_string_of_tools_is_accepted(tmp_path: Path) -> None:
    profile = parse_profile(_write(tmp_path / "fixer.md", STRING_TOOLS))
    assert profile.description == "Fixes: small bugs"
    assert profile.tool_names() == ["read_file", "edit_file", "run_command"]


def test_a_multi_line_description_with_colons_parses_leniently(tmp_path: Path) -> None:
    profile = parse_profile(_write(tmp_path / "scout.md", LENIENT))
    assert profile.name == "scout"
    assert profile.description.startswith("Use this agent to scout a codebase. Examples:")
    assert "what is in here?" in profile.description
    assert profile.tool_names() == ["glob", "grep", "read_file"]
    assert profile.model == "inherit" and profile.extra == {"color": "green"}


def test_no_tools_field_means_every_tool_and_the_name_defaults_to_the_file(tmp_path: Path) -> None:
    profile = parse_profile(_write(tmp_path / "helper.md", "---\ndescription: Helps.\n---\nHi\n"))
    assert profile.name == "helper" and profile.tools is None and profile.tool_names() is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("no front matter at all\n", "no front matter"),
        ("---\nname: [unclosed\ndescription: x\n---\nbody\n", "broken front matter"),
        ("---\n- a\n- b\n---\nbody\n", "key: value"),
        ("---\nname: two words\ndescription: x\n---\n", "short name"),
        ("---\nname: ok\ntools: 5\n---\n", "tools"),
    ],
)
def test_bad_profiles_raise_a_readable_error(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path / "bad.md", text)
    with pytest.raises(ProfileError) as info:
        parse_profile(path)
    assert needle in str(info.value) and str(path) in str(info.value)


def test_later_folders_win_and_a_broken_file_costs_one_notice(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    _write(home / "agents" / "a.md", "---\nname: shared\ndescription: from the user\n---\n")
    _write(ws / ".claude" / "agents" / "b.md", "---\nname: shared\ndescription: from claude\n---\n")
    _write(ws / ".claude" / "agents" / "broken.md", "---\nname: [x\n---\n")
    _write(ws / ".mycode" / "agents" / "c.md", "---\nname: own\ndescription: mine\n---\n")
    notices: list[str] = []
    profiles = load_profiles(profile_folders(ws, home), notices.append)
    assert profiles["shared"].description == "from claude"
    assert profiles["own"].description == "mine"
    assert {"explore", "general"} <= set(profiles)
    assert len(notices) == 1 and "broken.md" in notices[0]


def test_claude_code_model_aliases_mean_the_parents_model() -> None:
    config = SubagentSettings()
    for alias in ("sonnet", "opus", "haiku", "inherit", None):
        assert child_model(alias, config) is None
    assert child_model("my-local-model", config) == "my-local-model"
    mapped = SubagentSettings(model_aliases={"haiku": "small-model"})
    assert child_model("haiku", mapped) == "small-model"


def test_profiles_from_claude_code_and_mycode_folders_in_a_real_run(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    _write(ws / ".claude" / "agents" / "scout.md", LENIENT)
    _write(ws / ".mycode" / "agents" / "broken.md", "---\nname: [x\n---\n")
    _write(ws / ".mycode" / "agents" / "odd.md", "---\nname: odd\ndescription: odd one\n"
           "tools: Read, NotebookRead, WebFetch\n---\nBe odd.\n")  # fmt: skip
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: scout it", "scout")), answer("ok")]) as srv:
        srv.route("CHILD:", calls(call("grep", "k1", pattern="x")), answer("scouted"))
        result = run(srv, ws)
    assert result.rc == 0, result.stderr
    notices = [e["message"] for e in result.events if e["type"] == "notice"]
    assert any("broken.md" in n and "broken front matter" in n for n in notices)
    assert any("'odd'" in n and "NotebookRead" in n and "WebFetch" in n for n in notices)
    parent_tools = srv.chat_requests[0].body["tools"]
    (spec,) = [t["function"] for t in parent_tools if t["function"]["name"] == "delegate_task"]
    for name in ("explore", "general", "scout", "odd"):
        assert f"- {name}: " in spec["description"]
    assert "Be odd." not in spec["description"]  # names and descriptions only
    (child_request, *_rest) = requests_for(srv, "CHILD:")
    assert sorted(tool_names(child_request)) == ["glob", "grep", "read_file"]
    assert child_request.body["model"] == "fake-model"  # `inherit`
    assert "You scout." in child_request.messages[0]["content"]


PACKAGE_PLUGIN = """
from pathlib import Path
from mycode_core import hookimpl

@hookimpl(optionalhook=True)
def register_agent_profiles(register, context):
    register(Path(__file__).parent / "pkg_agents")
    register(Path(__file__).parent / "single.md")
"""


def test_packages_contribute_profiles_through_the_hook(tmp_path: Path) -> None:
    from mycode_core.testing import write_plugin_dist

    site = tmp_path / "site"
    write_plugin_dist(site, "pkgagents", PACKAGE_PLUGIN)
    _write(site / "pkg_agents" / "lint.md", "---\nname: linter\ndescription: Lints.\n---\nLint.\n")
    _write(site / "pkg_agents" / "dup.md", "---\nname: dup\ndescription: from the package\n---\n")
    _write(site / "single.md", "---\nname: single\ndescription: One file.\n---\n")
    ws = workspace(tmp_path)
    _write(ws / ".mycode" / "agents" / "dup.md", "---\nname: dup\ndescription: from mycode\n---\n")
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: lint", "linter")), answer("ok")]) as srv:
        srv.route("CHILD:", answer("linted"))
        result = run(srv, ws, pythonpath=[site])
    assert result.rc == 0, result.stderr
    (spec,) = [
        t["function"]
        for t in srv.chat_requests[0].body["tools"]
        if t["function"]["name"] == "delegate_task"
    ]
    assert "- linter: Lints." in spec["description"]
    assert "- single: One file." in spec["description"]
    assert "- dup: from mycode" in spec["description"]
    (child_request, *_rest) = requests_for(srv, "CHILD:")
    assert "Lint." in child_request.messages[0]["content"]


def test_profile_names_are_found_case_insensitively_with_claude_code_aliases() -> None:
    from mycode_subagents.delegate import Delegator

    delegator = Delegator(load_profiles([], lambda _m: None), SubagentSettings())
    assert delegator.find("Explore") is delegator.profiles["explore"]
    assert delegator.find("general-purpose") is delegator.profiles["general"]
    assert delegator.find("nosuch") is None


def test_the_agents_slash_command_lists_the_profiles(tmp_path: Path) -> None:
    from mycode_subagents import plugin

    from mycode_core.testing import make_context, make_plugin_manager

    context = make_context(tmp_path)
    context.plugin_manager = make_plugin_manager(plugin)
    _write(context.workspace / ".claude" / "agents" / "scout.md", LENIENT)
    _write(context.workspace / ".mycode" / "agents" / "bad.md", "---\nname: [x\n---\n")
    commands: list[object] = []
    plugin.register_slash_commands(register=commands.append, context=context)
    (command,) = commands
    output = command.run("", context).output  # type: ignore[attr-defined]
    assert "explore" in output and "general" in output
    assert "scout" in output and "glob, grep, read_file" in output
    assert "! agent profile skipped" in output and "bad.md" in output
    # the tools a profile names that this run lacks (this context has none at all)
    assert "not here (it runs without them): Glob, Grep, Read" in output


def test_every_claude_code_name_of_a_builtin_tool_is_read(tmp_path: Path) -> None:
    profile = parse_profile(
        _write(
            tmp_path / "all.md",
            "---\nname: all\ndescription: d\ntools: LS, NotebookEdit, Agent, Skill\n---\nGo.\n",
        )
    )
    assert profile.tool_names() == ["glob", "edit_file", "delegate_task", "load_skill"]


def test_two_plugins_profiles_of_one_name_stay_apart(tmp_path: Path) -> None:
    """Profiles registered with their plugin answer to ``plugin:name``; a second plugin's
    profile of a taken name is listed as ``plugin:name`` instead of replacing the first; a
    user's own profile takes the bare name from a plugin's, which stays ``plugin:name``, and
    a plugin's never replaces a built-in (claude-security's ``explore``)."""
    from mycode_subagents.delegate import Delegator

    one, two, user = tmp_path / "one", tmp_path / "two", tmp_path / "user"
    for folder in (one, two):
        _write(folder / "rev.md", f"---\nname: rev\ndescription: {folder.name}\n---\nx\n")
    _write(user / "solo.md", "---\nname: solo\ndescription: mine\n---\nx\n")
    _write(one / "solo.md", "---\nname: solo\ndescription: plugin's\n---\nx\n")
    _write(two / "explore.md", "---\nname: explore\ndescription: two's\ntools: Bash\n---\nx\n")
    plugins = {one: "one", two: "two"}
    profiles = load_profiles([one, two, user], lambda _m: None, None, plugins)
    assert profiles["rev"].description == "one" and profiles["two:rev"].description == "two"
    assert profiles["solo"].description == "mine"
    assert profiles["one:solo"].description == "plugin's"
    assert profiles["explore"].source == "built-in"
    assert profiles["two:explore"].tool_names() == ["run_command"]
    delegator = Delegator(profiles, SubagentSettings())
    assert delegator.find("one:rev") is profiles["rev"]
    assert delegator.find("two:rev") is profiles["two:rev"]
    assert delegator.find("one:solo") is profiles["one:solo"]
    assert delegator.find("two:solo") is None
    assert "- explore: Read-only" in delegator.description()
    assert "- two:explore: two's" in delegator.description()
