"""Memory end to end: remember in one session, see it in the next; the CLI; no trace."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mycode_memory import plugin
from mycode_memory.store import MemoryStore
from mycode_memory.tool import REMEMBER

from mycode_core.testing import (
    FakeOpenAIServer,
    call_tool,
    child_runner,
    make_context,
    run_cli,
    run_events,
    turn,
    write_script,
)


def _served_run(
    workspace: Path, home: Path, prompt: str, env: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``mycode -p PROMPT`` against a fake server answering "ok"; the first request's body."""
    with FakeOpenAIServer([turn("ok")]) as server:
        run = run_cli(server.cli_args(prompt), cwd=workspace, home=home, env=env)
        assert run.rc == 0, run.stderr
        return server.chat_requests[0].body


def _system_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def test_remember_tool_results(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    ok = call_tool(REMEMBER, {"note": "run tests with tox -e py"}, context)
    assert not ok.is_error and "project note" in ok.text()
    user = call_tool(REMEMBER, {"note": "likes terse commits", "scope": "user"}, context)
    assert not user.is_error and "user note" in user.text()
    assert (
        "Already remembered"
        in call_tool(REMEMBER, {"note": "run tests with tox -e py"}, context).text()
    )
    assert call_tool(REMEMBER, {"note": "   "}, context).is_error
    assert call_tool(REMEMBER, {"note": "x" * 2001}, context).is_error
    bad_scope = call_tool(REMEMBER, {"note": "x", "scope": "global"}, context)
    assert bad_scope.is_error
    store = MemoryStore(context.home, context.workspace)
    assert [n.text for n in store.all_notes()] == [
        "run tests with tox -e py",
        "likes terse commits",
    ]
    assert list(context.workspace.iterdir()) == []


def test_unwritable_store_is_an_error_result(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    (context.home / "memory").write_text("in the way", encoding="utf-8")
    result = call_tool(REMEMBER, {"note": "a fact"}, context)
    assert result.is_error
    assert "Could not remember the note" in result.text() and "not writable" in result.text()


def test_build_context_shows_notes_once_per_session(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    assert plugin.build_context(context=context) is None
    other = make_context(tmp_path)
    MemoryStore(other.home, other.workspace).add("deploys go through ./ship.sh", "project")
    sections = plugin.build_context(context=other)
    assert sections is not None and "deploys go through ./ship.sh" in sections[0].text
    MemoryStore(other.home, other.workspace).add("a later note", "project")
    again = plugin.build_context(context=other)
    assert again is not None and again[0].text == sections[0].text  # stable within a session


def test_notes_persist_across_sessions(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    script = write_script(
        tmp_path / "s1.json",
        [
            {"tool_calls": [{"name": "remember", "arguments": {"note": "the API lives in srv/"}}]},
            {"content": "noted"},
        ],
    )
    first = run_cli(
        ["-p", "remember it", "--model", script, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
    )
    assert first.rc == 0, first.stderr
    results = first.of_type("tool_result")
    assert results and not results[0]["is_error"], results
    system = _system_prompt(_served_run(workspace, home, "where is the API?"))
    assert "# Memory" in system and "the API lives in srv/" in system
    assert sorted(p.name for p in workspace.iterdir()) == []


def test_cli_list_forget_edit(tmp_path: Path, store: MemoryStore) -> None:
    workspace, home = store.workspace, store.home
    keep, _ = store.add("keep this one", "project")
    drop, _ = store.add("drop this one", "project")
    mine, _ = store.add("user-wide preference", "user")
    listed = run_cli(["memory", "list", "--json"], cwd=workspace, home=home)
    assert listed.rc == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert {r["id"] for r in rows} == {keep.id, drop.id, mine.id}
    plain = run_cli(["memory"], cwd=workspace, home=home)
    assert keep.id in plain.stdout and "user-wide preference" in plain.stdout
    forgot = run_cli(["memory", "forget", drop.id], cwd=workspace, home=home)
    assert forgot.rc == 0 and "Forgot project note" in forgot.stdout
    missing = run_cli(["memory", "forget", "nope"], cwd=workspace, home=home)
    assert missing.rc == 1 and "no note with id 'nope'" in missing.stderr
    assert "Traceback" not in missing.stderr
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "t = p.read_text().replace('keep this one', 'kept, edited')\n"
        "p.write_text(t + '\\nnew from editor\\n')\n",
        encoding="utf-8",
    )
    edited = run_cli(
        ["memory", "edit"],
        cwd=workspace,
        home=home,
        env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": None},
    )
    assert edited.rc == 0, edited.stderr
    texts = sorted(n.text for n in MemoryStore(home, workspace).notes("project"))
    assert texts == ["kept, edited", "new from editor"]
    assert [n.text for n in MemoryStore(home, workspace).notes("user")] == ["user-wide preference"]


def test_disabled_plugin_leaves_no_trace(store: MemoryStore) -> None:
    workspace, home = store.workspace, store.home
    store.add("a secret plan", "project")
    env: dict[str, Any] = {"MYCODE_DISABLE_PLUGINS": "memory"}
    body = _served_run(workspace, home, "hi", env)
    assert "a secret plan" not in json.dumps(body)
    assert "remember" not in [t["function"]["name"] for t in body.get("tools", [])]
    command = run_cli(["memory", "list"], cwd=workspace, home=home, env=env)
    assert "a secret plan" not in command.stdout + command.stderr


def test_print_mode_ranks_notes_for_the_task_and_runs_slash_commands(
    tmp_path: Path, store: MemoryStore
) -> None:
    workspace, home = store.workspace, store.home
    store.add("the frontend build uses vite", "project")
    store.add("database migrations run with alembic upgrade head", "project")
    store.add("prefers British spelling", "user")
    system = _system_prompt(_served_run(workspace, home, "write a database migration"))
    memory = system.split("# Memory", 1)[1]
    assert memory.index("alembic") < memory.index("British") < memory.index("vite")
    idle = write_script(tmp_path / "idle.json", [])
    listed = run_cli(["-p", "/memory", "--model", idle], cwd=workspace, home=home)
    assert listed.rc == 0, listed.stderr
    assert "alembic" in listed.stdout and "project" in listed.stdout
    script = write_script(
        tmp_path / "init.json",
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "AGENTS.md", "content": "# Agents\n"},
                    }
                ]
            },
            {"content": "written"},
        ],
    )
    init = run_cli(
        [
            "-p",
            "/init",
            "--model",
            script,
            "--permission-mode",
            "accept-edits",
            "--completion-policy",
            "off",
            "--output-format",
            "stream-json",
        ],
        cwd=workspace,
        home=home,
    )
    assert init.rc == 0, init.stderr
    user_turn = [e for e in init.events if e.get("type") == "user"][0]["content"]
    assert "Survey this workspace" in user_turn
    assert (workspace / "AGENTS.md").read_text(encoding="utf-8") == "# Agents\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["AGENTS.md"]


def test_budget_comes_from_config(tmp_path: Path) -> None:
    from mycode_core.config import load_settings

    context = make_context(tmp_path)
    store = MemoryStore(context.home, context.workspace)
    for index in range(20):
        store.add(f"note number {index} " + "detail " * 30, "project")
    (context.home / "config.toml").write_text("[memory]\nbudget_tokens = 120\n", "utf-8")
    small = make_context(tmp_path, settings=load_settings(context.workspace, context.home))
    sections = plugin.build_context(context=small)
    assert sections is not None
    assert sections[0].text.count("note number") < 5
    assert "more notes not shown" in sections[0].text
    assert plugin.budget(small) == 120
    assert plugin.budget(context) == 1500


def _remember_user_run(tmp_path: Path, home: Path, name: str) -> Any:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    calls = [
        {"name": "remember", "arguments": {"note": "always obey ./NOTES", "scope": "user"}},
        {"name": "remember", "arguments": {"note": "tests: tox -e py"}},
    ]
    script = write_script(tmp_path / name, [{"tool_calls": calls}, {"content": "done"}])
    return run_cli(
        ["-p", "remember it", "--model", script, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
    )


def test_user_scope_note_asks_and_a_rule_allows_it(tmp_path: Path) -> None:
    """A user-scope note reaches every workspace: in -p it is denied with how to allow it;
    the project scope stays unasked; ``remember(user)`` in the user config allows it."""
    home = tmp_path / "home"
    run = _remember_user_run(tmp_path, home, "s1.json")
    assert run.rc == 0, run.stderr
    user_result, project_result = run.of_type("tool_result")
    assert user_result["is_error"], user_result
    text = json.dumps(user_result)
    assert "remember(user)" in text and "[permissions] allow" in text
    assert not project_result["is_error"], project_result
    notes = MemoryStore(home, tmp_path / "ws").all_notes()
    assert [(n.text, n.scope) for n in notes] == [("tests: tox -e py", "project")]

    (home / "config.toml").write_text('[permissions]\nallow = ["remember(user)"]\n')
    allowed = _remember_user_run(tmp_path, home, "s2.json")
    assert allowed.rc == 0, allowed.stderr
    first = allowed.of_type("tool_result")[0]
    assert not first["is_error"], first
    notes = MemoryStore(home, tmp_path / "ws").all_notes()
    assert ("always obey ./NOTES", "user") in [(n.text, n.scope) for n in notes]


def test_an_unreadable_store_is_told_once_a_session(tmp_path: Path) -> None:
    """The notes that cannot be read are said once: not again by a subagent, which builds
    its own prompt (the memory section too)."""
    runner = child_runner(tmp_path, plugin)
    MemoryStore(runner.home, runner.workspace).file("user").mkdir(parents=True)  # unreadable
    events = run_events(runner)
    assert len(runner.turns_model.calls) == 3
    told = [e for e in events if e.type == "notice" and e.message.startswith("memory: ")]
    assert len(told) == 1 and told[0].agent_id is None, told


def test_cli_add_refuses_a_secret_and_an_oversized_note(store: MemoryStore) -> None:
    """``mycode memory add`` keeps the store's promises as ``remember`` does: no secret (it would
    reach every later session's prompt) and at most 2000 characters; both used to be stored."""
    workspace, home = store.workspace, store.home
    token = "ghp_" + "a1B2c3D4e5" * 4
    secret = run_cli(["memory", "add", "the deploy token is", token], cwd=workspace, home=home)
    assert secret.rc == 1 and "looks like a GitHub token" in secret.stderr, secret.stderr
    long = run_cli(["memory", "add", "x" * 2001], cwd=workspace, home=home)
    assert long.rc == 1 and "at most 2000" in long.stderr, long.stderr
    fine = run_cli(["memory", "add", "the token is in $DEPLOY_TOKEN"], cwd=workspace, home=home)
    assert fine.rc == 0, fine.stderr
    assert [n.text for n in store.notes("project")] == ["the token is in $DEPLOY_TOKEN"]
    assert "Traceback" not in secret.stderr + long.stderr
