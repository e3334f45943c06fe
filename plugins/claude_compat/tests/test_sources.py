"""Where hooks come from: trust, malformed files, plugin folders, ``mycode plugins``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cc_helpers import Env, bash, hooks_file, notices

from mycode_core.testing import run_cli


def test_project_hooks_run_only_in_a_trusted_workspace(env: Env) -> None:
    hooks_file(
        env.workspace / ".claude/settings.json", {"PreToolUse": [(None, [env.hook("proj")])]}
    )
    hooks_file(env.workspace / ".mycode/hooks.json", {"Stop": [(None, [env.hook("stop")])]})
    codex = {"PostToolUse": [("Bash", [env.hook("codex")])]}  # Codex's own project hooks
    hooks_file(env.workspace / ".codex/hooks.json", codex)
    result = env.run([bash("echo hi")])
    assert result.rc == 0
    assert env.log("proj") == [] and env.log("stop") == [] and env.log("codex") == []
    ignored = [n for n in notices(result) if "untrusted" in n]  # one notice per ignored file
    assert len(ignored) == 3
    assert any(".claude/settings.json" in n for n in ignored)
    assert any(".mycode/hooks.json" in n for n in ignored)
    assert any(".codex/hooks.json" in n for n in ignored)

    env.trust()
    hooks_file(
        env.workspace / ".claude/settings.local.json", {"PreToolUse": [(None, [env.hook("local")])]}
    )
    result = env.run([bash("echo hi")])
    assert not [n for n in notices(result) if "untrusted" in n]
    assert len(env.log("proj")) == 1 and len(env.log("local")) == 1 and len(env.log("stop")) == 1
    assert env.log("codex")[0]["stdin"]["tool_name"] == "Bash"
    permission = result.of_type("permission")[0]
    assert permission["decision"] == "allow"


def test_malformed_hook_files_are_one_notice_each(env: Env) -> None:
    (env.home / "hooks.json").write_text("{ not json")
    env.trust()
    settings = env.workspace / ".claude/settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}))
    result = env.run([bash("echo hi")])
    assert result.rc == 0
    assert "Traceback" not in result.stderr
    problems = [n for n in notices(result) if "Claude Code hooks" in n]
    assert len(problems) == 2
    assert any("not valid JSON" in n for n in problems)
    assert any("no 'hooks' list" in n for n in problems)


def _plugin(root: Path, env: Env, *, manifest: bool, mcp: bool = True) -> Path:
    folder = root / "my-plugin"
    if manifest:
        (folder / ".claude-plugin").mkdir(parents=True)
        (folder / ".claude-plugin/plugin.json").write_text(
            json.dumps({"name": "reviewer", "version": "1.2.0"})
        )
    (folder / "hooks").mkdir(parents=True)
    (folder / "hooks/check.sh").write_text(
        'cat > /dev/null; echo "root=$CLAUDE_PLUGIN_ROOT" >> "$CLAUDE_PLUGIN_ROOT/../seen.txt"\n'
    )
    hooks_file(
        folder / "hooks/hooks.json",
        {"PreToolUse": [("Bash", ['bash "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh"'])]},
    )
    (folder / "commands").mkdir()
    (folder / "commands/review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\n"
        "Review $1 carefully ($ARGUMENTS).\n"
    )
    (folder / "agents").mkdir()
    (folder / "agents/critic.md").write_text(
        "---\nname: critic\ndescription: Critiques\n---\nBe harsh.\n"
    )
    (folder / "skills/style").mkdir(parents=True)
    (folder / "skills/style/SKILL.md").write_text(
        "---\nname: style\ndescription: House style\n---\nx\n"
    )
    if mcp:
        (folder / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"tools": {"command": "${CLAUDE_PLUGIN_ROOT}/server"}}})
        )
    return folder


def test_plugin_folder_hooks_see_claude_plugin_root(env: Env) -> None:
    folder = _plugin(env.root, env, manifest=False, mcp=False)
    result = env.run([bash("echo hi")], "--plugin-dir", str(folder))
    assert result.rc == 0, result.stderr
    assert (env.root / "seen.txt").read_text().strip() == f"root={folder.resolve()}"
    assert not [n for n in notices(result) if "my-plugin" in n]  # no manifest is fine


def test_mycode_plugins_lists_each_folder_and_what_it_contributed(env: Env) -> None:
    folder = _plugin(env.root, env, manifest=True)
    broken = env.root / "broken"
    (broken / "hooks").mkdir(parents=True)
    (broken / "hooks/hooks.json").write_text("[1, 2")
    out = run_cli(
        ["plugins", "--plugin-dir", str(folder), "--plugin-dir", str(broken)],
        cwd=env.workspace,
        home=env.home,
    )
    assert out.rc == 0, out.stderr
    (row,) = [r for r in json.loads(out.stdout) if r["name"] == "claude_compat"]
    assert "permission_verdict" in row["hooks"]
    mine, bad = row["plugin_folders"]
    assert mine["name"] == "reviewer" and mine["version"] == "1.2.0" and mine["manifest"]
    assert mine["hooks"] == 1
    assert mine["commands"] == ["review"] and mine["agents"] == ["critic"]
    assert mine["skills"] == ["style"] and mine["mcp_servers"] == ["reviewer_tools"]
    assert bad["hooks"] == 0 and "not valid JSON" in bad["problems"][0]


def test_plugin_folder_mcp_servers_are_handed_to_the_bridge(env: Env) -> None:
    from mycode_claude_compat.folders import load_folder, mcp_config_file
    from mycode_claude_compat.sources import HookSet

    folder = load_folder(_plugin(env.root, env, manifest=True), "cli", HookSet(), env.home)
    path = mcp_config_file(folder, env.home)
    assert path is not None and path.is_relative_to(env.home)
    data = json.loads(path.read_text())
    assert data["mcpServers"]["reviewer_tools"]["command"] == f"{folder.root}/server"


def test_plugin_folder_mcp_servers_start_as_trusted_servers(env: Env) -> None:
    folder = env.root / "timeplugin"
    folder.mkdir()
    server = Path(sys.executable).with_name("mcp-server-time")
    (folder / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"clock": {"command": str(server), "args": ["--local-timezone", "UTC"]}}}
        )
    )
    result = env.run([{"content": "ok"}], "--plugin-dir", str(folder))
    assert result.rc == 0, result.stderr
    tools = result.of_type("system")[0]["tools"]
    assert any(name.startswith("mcp__timeplugin_clock__") for name in tools), (
        tools,
        notices(result),
    )


def test_project_plugin_dirs_need_trust(env: Env) -> None:
    folder = _plugin(env.root, env, manifest=True, mcp=False)
    (env.workspace / ".mycode").mkdir()
    (env.workspace / ".mycode/config.toml").write_text(f'plugin_dirs = ["{folder}"]\n')
    result = env.run([bash("echo hi")])
    assert not (env.root / "seen.txt").exists()
    assert any("untrusted" in n and "plugin folder" in n for n in notices(result))
    env.trust()
    env.run([bash("echo hi")])
    assert (env.root / "seen.txt").exists()


def test_a_folder_command_runs_in_print_mode(env: Env) -> None:
    folder = _plugin(env.root, env, manifest=True, mcp=False)
    hooks_file(env.home / "hooks.json", {"UserPromptSubmit": [(None, [env.hook("prompt")])]})
    result = env.run([{"content": "reviewed"}], "--plugin-dir", str(folder), prompt="/review a.py")
    assert result.rc == 0, result.stderr
    (user,) = result.of_type("user")
    assert user["content"].startswith("Review a.py carefully (a.py).")
    assert (
        env.log("prompt")[0]["stdin"]["prompt"] == "/review a.py"
    )  # as typed, as Claude Code gives it


def test_hook_timeouts_default_as_in_claude_code() -> None:
    """Ten minutes for a command (or http) hook, 30 s for a prompt hook, unless ``timeout``
    says otherwise: a Stop hook running a test suite for two minutes is not cut off."""
    from mycode_claude_compat.sources import HookSet, parse_hooks

    hooks = {
        "Stop": [
            {"hooks": [{"type": "command", "command": "make test"}]},
            {"hooks": [{"type": "command", "command": "quick", "timeout": 5}]},
            {"hooks": [{"type": "prompt", "prompt": "Is it done?"}]},
        ]
    }
    found = HookSet()
    assert parse_hooks({"hooks": hooks}, source="settings.json", layer="user", into=found) == []
    timeouts = {hook.command: hook.timeout for hook in found.matching("Stop", "", None)}
    assert timeouts == {"make test": 600.0, "quick": 5.0, "Is it done?": 30.0}
