"""Slash commands from ``commands/*.md`` and the other folder contributions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import Env, bash, hooks_file
from mycode_claude_compat.commands import CommandFile, expand, read_command

from mycode_core.testing import run_cli


def _command(folder: Path, name: str, text: str) -> tuple[CommandFile | None, str | None]:
    """``read_command`` of the file ``folder/name`` holding ``text``."""
    path = folder / name
    path.write_text(text)
    return read_command(path)


def test_command_front_matter_and_arguments(tmp_path: Path) -> None:
    command, problem = _command(
        tmp_path,
        "fix-issue.md",
        "---\ndescription: Fix an issue\nargument-hint: NUMBER PRIORITY\n"
        "allowed-tools: Bash(git:*), Read\n---\nFix issue #$1 with priority $2. All: $ARGUMENTS\n",
    )
    assert problem is None and command is not None
    assert command.name == "fix-issue" and command.description == "Fix an issue"
    assert command.argument_hint == "NUMBER PRIORITY"
    assert command.allowed_tools == ["Bash(git:*)", "Read"]
    assert expand(command.body, "123 high") == "Fix issue #123 with priority high. All: 123 high"
    assert expand(command.body, "") == "Fix issue #$1 with priority $2. All: "


def test_allowed_tools_split_only_at_commas_between_entries(tmp_path: Path) -> None:
    command, _ = _command(
        tmp_path,
        "tidy.md",
        "---\nallowed-tools: Bash(ls a,b:*), Edit(src/{x,y}.py), Read\n---\nTidy.\n",
    )
    assert command is not None
    assert command.allowed_tools == ["Bash(ls a,b:*)", "Edit(src/{x,y}.py)", "Read"]


def test_positionals_without_a_word_stay_and_arguments_are_not_expanded_again() -> None:
    """Claude Code keeps a ``$N`` it has no argument for (commit-commands' ``/clean_gone`` runs
    ``awk '{print $1}'``: it reached the model as ``awk '{print }'``), reads ``\\$1`` as a
    literal ``$1``, and does not expand placeholders inside the arguments it put in."""
    script = "git branch -v | awk '{print $1}' | xargs echo"
    assert expand(script, "") == script
    assert expand("Costs \\$1 per $1.", "seat") == "Costs $1 per seat."
    assert expand("All: $ARGUMENTS; first: $1", "$2 later") == "All: $2 later; first: $2"
    assert expand("Only \\$5 here.", "x y") == "Only $5 here.\n\nARGUMENTS: x y"


def test_zero_based_indexes_and_named_arguments_as_claude_code_fills_them(tmp_path: Path) -> None:
    """Claude Code's current form: ``$ARGUMENTS[N]`` and ``$N`` count from 0 (a command using
    ``$0`` or ``$ARGUMENTS[N]`` is read that way; quotes keep words together), and the front
    matter's ``arguments`` names them (a list, or words)."""
    zero = "Migrate the $0 component from $1 to $ARGUMENTS[2]."
    assert (
        expand(zero, '"Search Bar" React Vue')
        == "Migrate the Search Bar component from React to Vue."
    )
    assert expand("Only $ARGUMENTS[1]; $ARGUMENTS[5] stays", "a b") == "Only b; $ARGUMENTS[5] stays"
    listed, _ = _command(
        tmp_path,
        "fix.md",
        "---\narguments: [issue, base-branch]\n---\nFix $issue on $base-branch; $issued.\n",
    )
    assert listed is not None and listed.arguments == ("issue", "base-branch")
    assert expand(listed.body, "42 main", listed.arguments) == "Fix 42 on main; $issued."
    words, _ = _command(tmp_path, "ren.md", "---\narguments: old new\n---\nRename $old to $new.\n")
    assert words is not None and words.arguments == ("old", "new")
    assert expand(words.body, "A B", words.arguments) == "Rename A to B."
    assert expand(words.body, "A", words.arguments) == "Rename A to $new."


def test_a_command_without_placeholders_gets_its_arguments_appended(tmp_path: Path) -> None:
    command, _ = _command(tmp_path, "plain.md", "Summarise the changes.\n")
    assert command is not None and command.description == ""
    assert expand(command.body, "in src/") == "Summarise the changes.\n\nARGUMENTS: in src/"


def test_bad_front_matter_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    command, problem = _command(
        tmp_path, "bad.md", "---\ndescription: [unclosed\nnot a field [\n---\nBody\n"
    )
    assert command is not None and command.body == "Body"
    assert problem is not None and "front matter" in problem


def test_front_matter_yaml_cannot_read_is_read_field_by_field(tmp_path: Path) -> None:
    """``argument-hint: [env] [version]`` (the documented way to write two arguments) is not
    YAML: the whole front matter was dropped, with its description and allowed-tools."""
    command, problem = _command(
        tmp_path,
        "deploy.md",
        "---\ndescription: Deploy a version\nargument-hint: [environment] [version]\n"
        "allowed-tools:\n  - Bash(git tag:*)\n  - Read\nmodel: haiku\n---\nDeploy $2 to $1.\n",
    )
    assert problem is None and command is not None
    assert command.description == "Deploy a version"
    assert command.argument_hint == "[environment] [version]"
    assert command.allowed_tools == ["Bash(git tag:*)", "Read"]
    assert expand(command.body, "prod 1.2") == "Deploy 1.2 to prod."
    single, problem = _command(tmp_path, "new.md", "---\nargument-hint: [project-name]\n---\nx\n")
    assert problem is None and single is not None
    assert single.argument_hint == "[project-name]"  # a YAML list, shown as written


def test_folder_skills_and_agents_are_registered(tmp_path: Path) -> None:
    from mycode_claude_compat import plugin
    from mycode_claude_compat.session import STORE_KEY

    folder = tmp_path / "p"
    (folder / "agents").mkdir(parents=True)
    (folder / "skills/s").mkdir(parents=True)
    (folder / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")

    class Context:
        workspace = tmp_path
        home = tmp_path / "home"
        session_id = "s1"
        permission_mode = "default"
        store: dict[str, Any] = {}

        class settings:  # noqa: N801
            layers = [("cli", {"plugin_dirs": [str(folder)]})]

        def emit(self, event: Any) -> None:
            raise AssertionError(f"unexpected notice {event}")

    context: Any = Context()
    skills: list[Path] = []
    agents: list[Path] = []
    plugin.register_skills(register=skills.append, context=context)
    plugin.register_agent_profiles(register=agents.append, context=context)
    assert skills == [(folder / "skills").resolve()]
    assert agents == [(folder / "agents").resolve()]
    assert STORE_KEY in context.store


def test_folder_commands_become_slash_commands(tmp_path: Path) -> None:
    from mycode_claude_compat import plugin

    from mycode_core.cli.slash import collect_slash_commands
    from mycode_core.config import load_settings
    from mycode_core.records import RunContext
    from mycode_core.testing import make_plugin_manager

    folder = tmp_path / "p"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands/fix.md").write_text(
        "---\ndescription: Fix an issue\nargument-hint: NUMBER\n---\nFix issue #$1 now.\n"
    )
    (folder / "commands/notes.md").write_text("Write release notes.\n")
    (folder / "commands/ship.md").write_text("---\narguments: [env]\n---\nShip to $env.\n")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    settings = load_settings(workspace, home, {"plugin_dirs": [str(folder)]})
    notices: list[str] = []
    context = RunContext(workspace=workspace, home=home, settings=settings, session_id="s")
    commands = collect_slash_commands(make_plugin_manager(plugin), context, notices.append)
    assert sorted(commands) == ["fix", "notes", "p:fix", "p:notes", "p:ship", "ship"], notices
    fix = commands["fix"]
    assert fix.description == "Fix an issue" and fix.argument_hint == "NUMBER"
    assert fix.run("42", context) == "Fix issue #42 now."
    # Claude Code's namespaced form, which plugins' own docs tell users to type
    assert commands["p:fix"].run("7", context) == "Fix issue #7 now."
    assert commands["p:fix"].description == "Fix an issue"
    assert commands["fix"].alias_of == "p:fix"  # shown on one line: "/fix … (also /p:fix)"
    assert commands["notes"].run("", context) == "Write release notes."
    assert commands["ship"].run("prod", context) == "Ship to prod."  # a named argument
    assert notices == []


def _folder_command(env: Env, name: str, text: str) -> Path:
    """A plugin folder ``kit`` holding the command ``name`` with ``text``."""
    folder = env.root / "kit"
    (folder / "commands").mkdir(parents=True, exist_ok=True)
    (folder / "commands" / f"{name}.md").write_text(text)
    return folder


def test_a_commands_shell_commands_run_before_its_prompt_in_a_real_run(env: Env) -> None:
    folder = _folder_command(
        env,
        "brief",
        "---\ndescription: brief\n---\nSum up @notes.txt given !`echo from-the-shell-$1`, "
        "in the form of @${CLAUDE_PLUGIN_ROOT}/templates/brief.md\n"
        '```!\n"${CLAUDE_PLUGIN_ROOT}/setup.sh" $ARGUMENTS\n```\nThen go on.\n',
    )
    (folder / "setup.sh").write_text('#!/bin/sh\necho "state: $*" > state.txt\necho set up\n')
    (folder / "setup.sh").chmod(0o755)
    (folder / "templates").mkdir()
    (folder / "templates" / "brief.md").write_text("the template\n")
    hooks_file(folder / "hooks" / "hooks.json", {"PreToolUse": [(None, [env.hook("pre")])]})
    (env.workspace / "notes.txt").write_text("the notes\n")
    result = env.run([{"content": "done"}], "--plugin-dir", str(folder), prompt="/brief one two")
    assert result.rc == 0, [e for e in result.events if e["type"] in ("notice", "guidance")]
    sent = result.of_type("user")[0]["content"]
    assert "given from-the-shell-one," in sent and "set up\nThen go on." in sent, sent
    assert "!`" not in sent and "```!" not in sent and "run_command" not in sent
    assert (env.workspace / "state.txt").read_text() == "state: one two\n"  # before turn one
    assert '<mentioned-file path="notes.txt">' in sent and "the notes" in sent
    assert "${CLAUDE_PLUGIN_ROOT}" not in sent and "the template" in sent  # the plugin's folder
    assert result.of_type("tool_call") == [] and env.log("pre") == []  # no model's tool call


def test_a_command_whose_shell_command_is_denied_sends_nothing(env: Env) -> None:
    folder = _folder_command(
        env,
        "touchy",
        "---\nallowed-tools: Bash(touch:*), Bash(echo:*)\n---\n"
        "A: !`echo first`\nB: !`touch made.txt`\n",
    )
    (env.home / "config.toml").write_text('[permissions]\ndeny = ["run_command(touch:*)"]\n')
    result = env.run([{"content": "done"}], "--plugin-dir", str(folder), prompt="/touchy")
    assert result.rc == 0 and result.of_type("assistant") == []
    said = result.of_type("result")[0]["final_text"]
    assert said.startswith("/touchy was not run: `touch made.txt` is not allowed"), said
    assert not (env.workspace / "made.txt").exists()


def test_allowed_tools_become_rules_granted_for_the_commands_turn_only() -> None:
    from mycode_claude_compat.grants import CommandGrants, as_rules

    rules = as_rules(["Bash(git add:*)", "Read", " Edit(src/**) ", "mcp__db__query", "not a rule"])
    assert rules == ["run_command(git add:*)", "read_file", "edit_file(src/**)", "mcp__db__query"]
    grants = {"glob"}
    kept = CommandGrants()
    kept.expect("the command's prompt", ["run_command(git add:*)", "glob"])
    assert kept.on_prompt("another prompt", grants) == [] and grants == {"glob"}
    kept.expect("the command's prompt", ["run_command(git add:*)", "glob"])
    assert kept.on_prompt("the command's prompt", grants) == ["run_command(git add:*)"]
    assert grants == {"glob", "run_command(git add:*)"}
    kept.on_prompt("the next prompt", grants)
    assert grants == {"glob"}  # taken back; a grant the user gave stays


def test_a_commands_allowed_tools_approve_its_calls_but_not_over_a_users_deny(env: Env) -> None:
    import subprocess

    folder = env.root / "kit"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "stage.md").write_text(
        "---\nallowed-tools: Bash(git add:*)\ndescription: stage\n---\nStage notes.txt.\n"
    )
    subprocess.run(["git", "init", "-q", str(env.workspace)], check=True)
    (env.workspace / "notes.txt").write_text("n\n")
    turns = [bash("git add notes.txt"), {"content": "staged"}]

    def decisions(*args: str) -> list[str]:
        model = env.root / "script.json"
        model.write_text(json.dumps(turns))
        result = run_cli(
            ["-p", args[0], "--model", f"scripted:{model}", "--output-format", "stream-json"]
            + ["--plugin-dir", str(folder), *args[1:]],
            cwd=env.workspace,
            home=env.home,
        )
        return [e["decision"] for e in result.of_type("permission")]

    assert decisions("stage notes.txt") == ["deny"]  # git writes ask; -p says no
    assert decisions("/stage") == ["allow"]
    (env.home / "config.toml").write_text('[permissions]\ndeny = ["run_command(git add:*)"]\n')
    assert decisions("/stage") == ["deny"]


def test_a_plugin_command_runs_under_its_namespaced_name(env: Env) -> None:
    """Plugins tell their users to type ``/plugin:command`` (``/hookify:list``); that was sent
    to the model as plain text unless two plugins shared the command's name."""
    folder = env.root / "tidy"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "sweep.md").write_text("Sweep the $1 folder.\n")
    result = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt="/tidy:sweep src")
    assert result.rc == 0, result.stderr
    (user,) = result.of_type("user")
    assert user["content"] == "Sweep the src folder."


def test_a_plugin_skill_loads_under_its_namespaced_name(env: Env) -> None:
    """A plugin's commands name its skills as Claude Code does, ``plugin:skill`` ("load the
    kit:house-style skill first"); ``load_skill`` answered "Unknown skill"."""
    folder = env.root / "kit"
    (folder / "skills" / "house-style").mkdir(parents=True)
    (folder / "skills" / "house-style" / "SKILL.md").write_text(
        "---\nname: house-style\ndescription: How we write code here.\n---\nTabs, never spaces.\n"
    )
    turns = [
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "kit:house-style"}}]},
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "other:house-style"}}]},
        {"content": "ok"},
    ]
    result = env.run(turns, "--plugin-dir", str(folder))
    assert result.rc == 0, result.stderr
    found, wrong_plugin = result.of_type("tool_result")
    assert not found["is_error"] and "Tabs, never spaces." in found["content"]
    assert wrong_plugin["is_error"] and "Unknown skill" in wrong_plugin["content"]


def test_two_plugins_agents_of_one_name_are_both_reachable(env: Env) -> None:
    """Two plugins with an agent of the same name (``code-reviewer`` is in two official
    plugins): the second silently replaced the first, and Claude Code's ``plugin:agent``
    name was unknown. Both answer now to ``plugin:agent``."""
    from mycode_core.testing import FakeOpenAIServer, turn

    folders = []
    for plugin in ("one", "two"):
        folder = env.root / plugin
        (folder / "agents").mkdir(parents=True)
        (folder / "agents" / "checker.md").write_text(
            f"---\nname: checker\ndescription: Checks things.\n---\nYou are the {plugin} checker.\n"
        )
        folders += ["--plugin-dir", str(folder)]

    def delegate(agent: str) -> Any:
        return turn(
            tool_calls=[{"name": "delegate_task", "arguments": {"task": "t", "agent": agent}}]
        )

    with FakeOpenAIServer() as server:
        server.enqueue(delegate("one:checker"), turn("checked 1"))
        server.enqueue(delegate("two:checker"), turn("checked 2"), turn("done"))
        result = run_cli(
            [*server.cli_args("check", output_format="stream-json"), *folders],
            cwd=env.workspace,
            home=env.home,
        )
        systems = [request.messages[0]["content"] for request in server.chat_requests]
    assert result.rc == 0, result.stderr
    results = [event for event in result.of_type("tool_result") if "agent_id" not in event]
    assert [event["is_error"] for event in results] == [False, False], results
    assert "You are the one checker." in systems[1] and "two checker" not in systems[1]
    assert "You are the two checker." in systems[3]


def test_a_plugins_agent_never_replaces_a_builtin_or_project_profile(env: Env) -> None:
    """claude-security ships ``agents/explore.md`` (with Bash): ``delegate_task`` to
    ``explore`` ran it instead of the built-in read-only ``explore``. A plugin's agent now
    takes its bare name only when no built-in, user or project profile holds it, and is
    always ``plugin:agent`` (as the plugin's own files call it); the listing says which."""
    from mycode_core.testing import FakeOpenAIServer, turn

    folder = env.root / "kit"
    (folder / "agents").mkdir(parents=True)
    for name in ("explore", "checker", "solo"):
        (folder / "agents" / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: The kit's {name}.\ntools: Read, Bash\n---\n"
            f"You are the kit {name}.\n"
        )
    agents = env.workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "checker.md").write_text(
        "---\nname: checker\ndescription: The project's checker.\n---\nProject checker.\n"
    )
    asked = ["explore", "kit:explore", "checker", "kit:checker", "solo", "kit:solo"]
    with FakeOpenAIServer() as server:
        for agent in asked:
            call = {"name": "delegate_task", "arguments": {"task": "t", "agent": agent}}
            server.enqueue(turn(tool_calls=[call]), turn(f"{agent} done"))
        server.enqueue(turn("done"))
        result = run_cli(
            [*server.cli_args("go", output_format="stream-json"), "--plugin-dir", str(folder)],
            cwd=env.workspace,
            home=env.home,
        )
        requests = list(server.chat_requests)
    assert result.rc == 0, result.stderr
    (spec,) = [
        tool["function"]["description"]
        for tool in requests[0].body["tools"]
        if tool["function"]["name"] == "delegate_task"
    ]
    assert "- explore: Read-only" in spec and "- kit:explore: The kit's explore." in spec
    assert "- checker: The project's checker." in spec
    assert "- kit:checker: The kit's checker." in spec and "- solo: The kit's solo." in spec
    systems = [request.messages[0]["content"] for request in requests[1::2]]
    explore_tools = sorted(tool["function"]["name"] for tool in requests[1].body["tools"])
    assert explore_tools == ["glob", "grep", "read_file"] and "kit explore" not in systems[0]
    assert "You are the kit explore." in systems[1]
    assert "Project checker." in systems[2] and "You are the kit checker." in systems[3]
    assert "You are the kit solo." in systems[4] and "You are the kit solo." in systems[5]


def test_a_plugins_agent_naming_claude_code_only_tools_is_told_once_when_used(env: Env) -> None:
    """feature-dev's agents name NotebookRead, WebFetch, KillShell...: every run printed one
    warning per agent, used or not. It is said once, when the agent is delegated to."""
    from mycode_core.testing import FakeOpenAIServer, turn

    folder = env.root / "dev"
    (folder / "agents").mkdir(parents=True)
    for name in ("architect", "reviewer"):
        (folder / "agents" / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: d\ntools: Read, WebFetch, KillShell\n---\nGo.\n"
        )
    call = {"name": "delegate_task", "arguments": {"task": "t", "agent": "architect"}}
    with FakeOpenAIServer() as server:
        server.enqueue(turn("nothing to delegate"))
        server.enqueue(turn(tool_calls=[call]), turn("1"), turn(tool_calls=[call]), turn("2"))
        server.enqueue(turn("done"))
        runs = [
            run_cli(
                [*server.cli_args("go", output_format="stream-json"), "--plugin-dir", str(folder)],
                cwd=env.workspace,
                home=env.home,
            )
            for _ in range(2)
        ]
    notices = [[e["message"] for e in run.of_type("notice")] for run in runs]
    assert all(run.rc == 0 for run in runs), runs[1].stderr
    assert not any("do not exist here" in n for n in notices[0]), notices[0]
    (told,) = [n for n in notices[1] if "do not exist here" in n]
    assert "'architect'" in told and "WebFetch, KillShell" in told


def test_an_installed_plugins_command_runs_its_own_script_in_the_sandbox(env: Env) -> None:
    """An installed plugin lives under ``MYCODE_HOME``, which the command sandbox hides: its
    command's ``${CLAUDE_PLUGIN_ROOT}/scripts/...`` (ralph-wiggum's setup script) failed with
    "No such file or directory". The folder of the command that runs is now visible,
    read-only, and the rest of ``MYCODE_HOME`` stays hidden."""
    from mycode_core.testing import write_script

    source = env.root / "kit"
    (source / "commands").mkdir(parents=True)
    (source / "scripts").mkdir()
    (source / ".claude-plugin").mkdir()
    (source / ".claude-plugin/plugin.json").write_text('{"name": "kit"}')
    (source / "scripts/hello.sh").write_text("#!/bin/sh\necho hello-from-kit\n")
    (source / "scripts/hello.sh").chmod(0o755)
    (source / "commands/hi.md").write_text(
        "---\nallowed-tools: Bash(${CLAUDE_PLUGIN_ROOT}/scripts/hello.sh:*)\n---\n"
        "Say: !`${CLAUDE_PLUGIN_ROOT}/scripts/hello.sh`\n"
    )
    installed = run_cli(["plugins", "install", str(source)], cwd=env.workspace, home=env.home)
    assert installed.rc == 0, installed.stderr
    script = env.home / "plugins/kit/scripts/hello.sh"
    (env.home / "secret.txt").write_text("do not show")
    turns = [bash(str(script)), bash(f"cat {env.home / 'secret.txt'}"), {"content": "ok"}]
    model = write_script(env.root / "script.json", turns)
    result = run_cli(
        ["-p", "/hi", "--model", model, "--output-format", "stream-json"],
        cwd=env.workspace,
        home=env.home,
    )
    assert result.rc == 0, result.stderr
    hello, secret = result.of_type("tool_result")
    if not hello.get("metadata", {}).get("sandboxed"):
        pytest.skip("no command sandbox here")
    assert not hello["is_error"] and "hello-from-kit" in hello["content"], hello
    assert "do not show" not in secret["content"]


def test_a_commands_checklist_is_not_the_users_request_for_tests(env: Env) -> None:
    """A plugin command's body is the author's instructions: its checklist ("type errors")
    and examples ("Did you run tests before finishing?") are no request of the user's, so the
    completion gate does not hold a review that ran no tests (the official code-review and
    hookify help commands ended ``gate_exhausted``); words the user typed after the command
    still count."""
    folder = env.root / "reviewkit"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "check.md").write_text(
        "---\ndescription: Review the change\n---\nReview the change for:\n"
        "- code that fails to compile (type errors, missing imports)\n\n"
        "```markdown\nDid you run tests before finishing? Make sure the tests pass.\n```\n"
        "$ARGUMENTS\n"
    )
    args = ["--plugin-dir", str(folder), "--permission-mode", "default"]
    review = env.run([{"content": "No problems found."}], *args, prompt="/reviewkit:check")
    assert review.result is not None and review.result["stop_reason"] == "completed"
    assert not review.of_type("guidance")
    asked = env.run([{"content": "Reviewed."}], *args, prompt="/check and run the tests")
    # the user's own words are held: the gate blocks (the project has no tests, so once, and
    # an answer without a test run is then unverified, not a pass)
    assert asked.result is not None and asked.result["verdict"] == "unverified"
    assert "run the tests" in asked.of_type("guidance")[0]["message"]


def test_a_plugins_commands_in_subfolders_are_commands(env: Env) -> None:
    """Claude Code finds a plugin's commands in subfolders of ``commands/`` too
    (``commands/review/security.md`` is ``/security``); they were not loaded at all."""
    folder = env.root / "audit"
    (folder / "commands" / "review").mkdir(parents=True)
    (folder / "commands" / "review" / "security.md").write_text("Audit $ARGUMENTS for leaks.\n")
    for prompt in ("/security src", "/audit:security src"):
        result = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt=prompt)
        assert result.rc == 0, result.stderr
        (user,) = result.of_type("user")
        assert user["content"] == "Audit src for leaks."
    listing = run_cli(["plugins", "--plugin-dir", str(folder)], cwd=env.workspace, home=env.home)
    row = [r for r in json.loads(listing.stdout) if r.get("name") == "audit"][0]
    assert row["contributes"]["commands"] == ["security"]


def test_a_plugins_help_command_never_takes_the_sessions_help(env: Env) -> None:
    """hookify ships ``commands/help.md``: ``mycode -p "/help"`` sent its prompt to the model,
    and the session's ``/help`` listed ``/hookify:help … (= /help)``. As in Claude Code,
    ``/help`` is the session's own (``-p`` says it is the interactive session's, as for any
    built-in's name) and the plugin's is ``/plugin:help``; another command keeps its short
    name."""
    from mycode_claude_compat import plugin

    from mycode_core.cli.slash import collect_slash_commands, help_entries
    from mycode_core.config import load_settings
    from mycode_core.records import RunContext
    from mycode_core.testing import make_plugin_manager

    folder = env.root / "guard"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "help.md").write_text(
        "---\ndescription: How guard works\n---\nExplain the guard rules.\n"
    )
    (folder / "commands" / "list.md").write_text("---\ndescription: The rules\n---\nList them.\n")

    def sent(prompt: str) -> str:
        result = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt=prompt)
        assert result.rc == 0, result.stderr
        (user,) = result.of_type("user")
        return str(user["content"])

    refused = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt="/help")
    assert refused.rc == 2 and "command of the interactive session" in refused.stderr
    assert not refused.of_type("user")
    assert sent("/guard:help") == "Explain the guard rules."
    assert sent("/list") == "List them."
    settings = load_settings(env.workspace, env.home, {"plugin_dirs": [str(folder)]})
    context = RunContext(workspace=env.workspace, home=env.home, settings=settings, session_id="s")
    commands = collect_slash_commands(make_plugin_manager(plugin), context, print)
    assert help_entries(commands) == {
        "guard:help": "How guard works",
        "list": "The rules (also /guard:list)",
    }


def test_a_commands_shell_command_whose_work_the_sandbox_took_back_says_so(env: Env) -> None:
    """A loop plugin's setup script (ralph's ``/ralph-loop``) writes its state file under
    ``.claude/``, which the command sandbox keeps read-only: the file was moved away after
    the command and the prompt said "activated" all the same, so the loop silently never ran.
    The note ``run_command`` adds for the model is now part of the command's output."""
    folder = _folder_command(
        env,
        "loop",
        "---\ndescription: start a loop\n---\n"
        "Setup: !`mkdir -p .claude && echo 'iteration: 1' > .claude/loop.local.md && echo on`\n"
        "Work on: $ARGUMENTS\n",
    )
    result = env.run(
        [bash("echo probe"), {"content": "done"}],
        "--plugin-dir", str(folder), "--permission-mode", "default",
        prompt="/loop build it",
    )  # fmt: skip
    assert result.rc == 0, result.stderr
    ran = result.of_type("tool_result")  # unsandboxed, -p refuses the write: nothing is sent
    if not ran or not ran[0].get("metadata", {}).get("sandboxed"):
        pytest.skip("no command sandbox here")
    sent = result.of_type("user")[0]["content"]
    assert "Setup: on\n(the command created .claude/" in sent, sent
    assert "moved to" in sent and "Work on: build it" in sent
    assert not (env.workspace / ".claude" / "loop.local.md").exists()


def test_plugins_lists_agents_by_the_names_a_run_answers_to(env: Env) -> None:
    """Claude Code keys agents by their front matter ``name``, and a plugin's commands name
    them so (``subagent_type: "kit-auditor"`` for ``agents/auditor.md``): a run answered to
    ``kit-auditor`` while ``mycode plugins`` listed ``auditor``."""
    folder = env.root / "kit"
    (folder / "agents").mkdir(parents=True)
    (folder / "agents" / "auditor.md").write_text(
        "---\nname: kit-auditor\ndescription: Audits.\nmodel: opus\n---\nYou audit.\n"
    )
    (folder / "agents" / "plain.md").write_text("---\ndescription: No name.\n---\nYou help.\n")
    listed = run_cli(["plugins", "--plugin-dir", str(folder)], cwd=env.workspace, home=env.home)
    assert listed.rc == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r.get("path") == str(folder.resolve()))
    assert row["contributes"]["agents"] == ["kit-auditor", "plain"], row
    call = {"name": "delegate_task", "arguments": {"task": "audit", "agent": "kit-auditor"}}
    result = env.run(
        [{"tool_calls": [call]}, {"content": "audited"}, {"content": "done"}],
        "--plugin-dir", str(folder),
    )  # fmt: skip
    answer = [e for e in result.of_type("tool_result") if "agent_id" not in e][0]
    assert not answer["is_error"] and "profile kit-auditor" in answer["content"], answer
