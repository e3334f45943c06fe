"""Project servers need approval; user, local and --mcp-config servers do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_helpers import Run, feature
from mycode_mcp_bridge import trust
from mycode_mcp_bridge.config import load_servers

from mycode_core.config import load_settings


def _project(workspace: Path, servers: dict[str, object]) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_print_mode_skips_project_servers_with_one_notice(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature(), "two": feature()})
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    try:
        assert run.bridge is None
        notices = run.notices()
        assert len(notices) == 1
        assert "'one'" in notices[0] and "'two'" in notices[0]
        assert "trust_project_servers" in notices[0] and "[mcp]" in notices[0]
    finally:
        run.close()


def test_trust_setting_in_user_config(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature(), "two": feature()})
    (home / "config.toml").write_text('[mcp]\ntrust_project_servers = ["two"]\n')
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    try:
        assert run.bridge is not None and [s.name for s in run.bridge.specs] == ["two"]
        assert "mcp__two__echo" in run.context.tools.names()
        assert any("'one'" in n for n in run.notices())
    finally:
        run.close()


def test_project_config_cannot_trust_itself(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature()})
    (workspace / ".mycode").mkdir()
    (workspace / ".mycode" / "config.toml").write_text("[mcp]\ntrust_project_servers = true\n")
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    try:
        assert run.bridge is None
        assert any("'one'" in n for n in run.notices())
    finally:
        run.close()


def test_interactive_approval_is_remembered(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature()})
    questions: list[tuple[str, list[str]]] = []

    def ask(question: str, options: list[str]) -> str:
        questions.append((question, options))
        return "allow always"

    settings = load_settings(workspace, home)
    run = Run(workspace, home, settings=settings, interactive=True, ask=ask).start()
    try:
        assert "mcp__one__echo" in run.context.tools.names()
        assert len(questions) == 1 and "'one'" in questions[0][0]
        assert "allow always" in questions[0][1]
    finally:
        run.close()
    again = Run(workspace, home, settings=settings, interactive=False).start()
    try:
        assert "mcp__one__echo" in again.context.tools.names()  # remembered, no prompt needed
    finally:
        again.close()
    # A changed entry needs a new approval.
    _project(workspace, {"one": feature("--name", "changed")})
    changed = Run(workspace, home, settings=load_settings(workspace, home)).start()
    try:
        assert changed.bridge is None
    finally:
        changed.close()


def test_interactive_denial_is_remembered(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature()})
    asked: list[str] = []

    def ask(question: str, options: list[str]) -> str:
        asked.append(question)
        return "deny"

    settings = load_settings(workspace, home)
    for _ in range(2):
        run = Run(workspace, home, settings=settings, interactive=True, ask=ask).start()
        assert run.bridge is None
        run.close()
    assert len(asked) == 1


def test_allow_once_is_not_remembered(workspace: Path, home: Path) -> None:
    _project(workspace, {"one": feature()})
    settings = load_settings(workspace, home)
    run = Run(
        workspace, home, settings=settings, interactive=True, ask=lambda q, o: "allow"
    ).start()
    try:
        assert "mcp__one__echo" in run.context.tools.names()
    finally:
        run.close()
    later = Run(workspace, home, settings=settings).start()
    try:
        assert later.bridge is None
    finally:
        later.close()


def test_user_and_cli_servers_are_trusted(workspace: Path, home: Path) -> None:
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"u": feature()}}))
    settings = load_settings(
        workspace, home, {"mcp_config_files": [json.dumps({"mcpServers": {"c": feature()}})]}
    )
    run = Run(workspace, home, settings=settings).start()
    try:
        names = run.context.tools.names()
        assert "mcp__u__echo" in names and "mcp__c__echo" in names
        assert run.notices() == []
    finally:
        run.close()


def test_the_question_shows_what_the_server_is_handed(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project server asking for a key of the user's says so, unexpanded, before approval."""
    monkeypatch.setenv("MY_SECRET_TOKEN", "tok-very-secret")
    _project(workspace, {"one": feature(env={"API_KEY": "${MY_SECRET_TOKEN}"})})
    questions: list[str] = []

    def ask(question: str, options: list[str]) -> str:
        questions.append(question)
        return "deny"

    run = Run(
        workspace, home, settings=load_settings(workspace, home), interactive=True, ask=ask
    ).start()
    run.close()
    assert len(questions) == 1
    assert "env API_KEY=${MY_SECRET_TOKEN}" in questions[0]
    assert "tok-very-secret" not in questions[0]


def _project_names_files(workspace: Path, config: str, servers: dict[str, object]) -> None:
    """The project's own config names an MCP server file (inline JSON), as --mcp-config would."""
    (workspace / ".mycode").mkdir(exist_ok=True)
    inline = json.dumps({"mcpServers": servers})
    (workspace / ".mycode" / config).write_text(f"mcp_config_files = [{json.dumps(inline)}]\n")


@pytest.mark.parametrize("config", ["config.toml", "config.local.toml"])
def test_untrusted_project_cannot_name_trusted_server_files(
    workspace: Path, home: Path, config: str
) -> None:
    """SPEC §8: servers named by --mcp-config are trusted, so the project's config may not name
    such files — its command would start unasked (a cloned repo running code on `mycode -p`)."""
    _project_names_files(workspace, config, {"evil": feature()})
    mine = json.dumps(json.dumps({"mcpServers": {"mine": feature()}}))
    (home / "config.toml").write_text(f"mcp_config_files = [{mine}]\n")  # the user's own
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    try:
        names = run.context.tools.names()
        assert "mcp__evil__echo" not in names and "mcp__mine__echo" in names
        ignored = [n for n in run.notices() if "mcp_config_files" in n]
        assert len(ignored) == 1 and "untrusted" in ignored[0] and config in ignored[0]
    finally:
        run.close()
    trusted = load_settings(workspace, home, {"trust_workspace": True})
    run = Run(workspace, home, settings=trusted).start()
    try:
        assert "mcp__evil__echo" in run.context.tools.names()  # the user trusts it: it starts
    finally:
        run.close()


def _claude_settings(folder: Path, data: dict[str, object], name: str = "settings.json") -> None:
    (folder / ".claude").mkdir(exist_ok=True)
    (folder / ".claude" / name).write_text(json.dumps(data))


@pytest.mark.parametrize("trusted", [False, True])
def test_disabled_mcpjson_servers_reject_project_servers_before_any_approval(
    workspace: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
    """Claude Code's ``disabledMcpjsonServers`` (the servers a user rejected) was ignored: a
    rejected server started. As in Claude Code it wins over ``enableAllProjectMcpServers``,
    ``enabledMcpjsonServers`` and an approval; a project's own list counts in an untrusted
    workspace (it only tightens), ``~/.claude/settings.json``'s once the user opts in."""
    servers = {name: feature() for name in ("one", "two", "three", "four")}
    _project(workspace, servers)
    (home / "config.toml").write_text("[mcp]\ntrust_project_servers = true\n")
    _claude_settings(
        workspace, {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["one"]}
    )
    local = {"enabledMcpjsonServers": ["two", "three", "four"], "disabledMcpjsonServers": ["two"]}
    _claude_settings(workspace, local, "settings.local.json")
    user_home = tmp_path / "user"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    _claude_settings(user_home, {"disabledMcpjsonServers": ["three"]})
    flags = {"trust_workspace": True} if trusted else {}
    run = Run(workspace, home, settings=load_settings(workspace, home, flags)).start()
    try:
        assert [s.name for s in run.bridge.specs] == ["four", "three"]
    finally:
        run.close()
    config = "[mcp]\ntrust_project_servers = true\n[claude_compat]\nuser_claude_settings = true\n"
    (home / "config.toml").write_text(config)
    settings = load_settings(workspace, home, flags)
    spec = load_servers(workspace, home, settings).servers["one"]
    trust.remember(home, workspace, spec, trust.ALLOW)  # an approval does not override it
    run = Run(workspace, home, settings=settings).start()
    try:
        assert [s.name for s in run.bridge.specs] == ["four"]
        assert run.notices() == []  # rejected servers are not "skipped, approve them"
    finally:
        run.close()
    from mycode_mcp_bridge.cli import mcp_cli

    listed = CliRunner().invoke(mcp_cli, ["list", "--json", "--cwd", str(workspace)])
    rows = {row["name"]: row for row in json.loads(listed.stdout)["servers"]}
    assert rows["one"]["status"] == "rejected"
    claude = workspace / ".claude"
    assert rows["one"]["reason"] == f"disabled by disabledMcpjsonServers in {claude}/settings.json"
    assert rows["two"]["reason"].endswith(f"{claude}/settings.local.json")
    assert rows["three"]["reason"].endswith(f"{user_home}/.claude/settings.json")
    assert rows["four"]["status"] == "ready"
