"""Codex folders, folders with several manifests, trust and the ``mycode plugins`` listing
(SPEC §11)."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

from ap_helpers import PLUGIN_SCHEMA, TIME_SERVER, agent_plugin, skill, wrapper_server
from cc_helpers import Env, bash, notices
from mycode_claude_compat.folders import read_folder

from mycode_core.testing import run_cli


def _codex(root: Path, env: Env, manifest: dict[str, object]) -> Path:
    (root / ".codex-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps(manifest))
    return root


def _hooks(env: Env, name: str) -> dict[str, object]:
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": env.hook(name)}]}]}}


def test_codex_folder_skills_hooks_and_inline_mcp(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "cx"
    skill(root / "my-skills", "cx-skill")
    (root / "hooks.json").write_text(json.dumps(_hooks(env, "cx")))
    _codex(
        root,
        env,
        {
            "name": "cxp",
            "version": "0.3.0",
            "skills": "./my-skills/",
            "hooks": "./hooks.json",
            "mcpServers": {
                "clock": {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]}
            },
        },
    )
    folder = read_folder(root, "cli", env.home)
    assert folder.format == "codex" and folder.name == "cxp" and folder.version == "0.3.0"
    assert folder.skill_names() == ["cx-skill"] and folder.hook_set.count() == 1
    result = env.run([bash("echo hi"), {"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    assert len(env.log("cx")) == 1
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__cxp_clock__") for t in tools), (tools, notices(result))
    out = run_cli(["skills", "--json", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    assert [(s["name"], s["plugin"]) for s in json.loads(out.stdout)["skills"]] == [
        ("cx-skill", "cxp")
    ]
    listed = run_cli(
        ["--plugin-dir", str(root), "tools", "--json"], cwd=env.workspace, home=env.home
    )
    assert listed.rc == 0, listed.stderr
    assert any(row["name"].startswith("mcp__cxp_clock__") for row in json.loads(listed.stdout))


def test_codex_mcp_servers_by_path_and_refused_paths(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "cx"
    root.mkdir()
    (root / "servers.json").write_text(
        json.dumps(
            {"mcpServers": {"a": {"command": "${PLUGIN_ROOT}/bin/a", "args": ["${PLUGIN_DATA}"]}}}
        )
    )
    _codex(root, env, {"name": "cxp", "mcpServers": "./servers.json", "skills": "../outside"})
    folder = read_folder(root, "cli", env.home)
    entry = folder.mcp_servers["cxp_a"]
    real = str(root.resolve())
    assert entry["command"] == f"{real}/bin/a"
    assert entry["args"] == [str(env.home / "plugin-data" / "cxp")]
    assert entry["env"]["PLUGIN_ROOT"] == real and entry["cwd"] == real
    assert folder.skill_dirs == [] and any("outside" in s["reason"] for s in folder.skipped)


def test_codex_manifest_not_json_is_refused(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "cx"
    (root / ".codex-plugin").mkdir(parents=True)
    (root / ".codex-plugin" / "plugin.json").write_text("{")
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 1 and json.loads(out.stdout)["format"] == "codex"
    assert "Traceback" not in out.stderr


def test_each_problem_is_reported_once_in_its_own_list(env: Env, tmp_path: Path) -> None:
    """A Codex manifest that is not JSON is fatal, not also a warning (it was listed under
    both), in ``validate`` and in the report of a refused install; an Agent Plugins folder
    with a fatal name and an unknown field has one in each list."""
    codex = tmp_path / "cx"
    (codex / ".codex-plugin").mkdir(parents=True)
    (codex / ".codex-plugin" / "plugin.json").write_text("{")
    portable = agent_plugin(
        tmp_path / "ap", {"$schema": PLUGIN_SCHEMA, "name": "Bad Name", "colour": "red"}
    )
    for root, fatal, warning in ((codex, "not valid JSON", None), (portable, "5.5", "colour")):
        out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
        refused = run_cli(["plugins", "install", str(root)], cwd=env.workspace, home=env.home)
        assert out.rc == 1 and refused.rc == 1, (out.stderr, refused.stderr)
        installing = json.loads(refused.stderr[: refused.stderr.rindex("}") + 1])
        for report in (json.loads(out.stdout), installing):
            assert len(report["fatal"]) == 1 and fatal in json.dumps(report["fatal"]), report
            messages = [item["message"] for item in report["fatal"] + report["warnings"]]
            assert len(messages) == len(set(messages)), report
            if warning is None:
                assert report["warnings"] == [], report
            else:
                assert len(report["warnings"]) == 1 and warning in json.dumps(report["warnings"])


def test_one_folder_with_three_manifests_loads_once_as_agent_plugins(
    env: Env, tmp_path: Path
) -> None:
    root = agent_plugin(tmp_path / "all", name="portable", skills=("shared",))
    _codex(root, env, {"name": "portable", "skills": "./skills/", "hooks": "./h.json"})
    (root / "h.json").write_text(json.dumps(_hooks(env, "codex-hook")))
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "portable"}))
    folder = read_folder(root, "cli", env.home)
    assert folder.format == "agent-plugins" and folder.hook_set.count() == 0
    assert {s["what"] for s in folder.skipped} == {"codex manifest", "claude-code manifest"}
    (env.home / "config.toml").write_text(f'plugin_dirs = ["{root}"]\n')
    out = run_cli(["plugins"], cwd=env.workspace, home=env.home)
    rows = [r for r in json.loads(out.stdout) if r.get("path") == str(root.resolve())]
    assert len(rows) == 1 and rows[0]["format"] == "agent-plugins"
    result = env.run([bash("echo hi"), {"content": "ok"}])
    assert env.log("codex-hook") == [] and result.rc == 0
    # then Claude Code's manifest wins over Codex's, and Codex's over a bare Claude Code layout
    (root / "plugin.json").unlink()
    folder = read_folder(root, "cli", env.home)
    assert folder.format == "claude-code"
    assert [s["what"] for s in folder.skipped] == ["codex manifest"]
    (root / ".claude-plugin" / "plugin.json").unlink()
    assert read_folder(root, "cli", env.home).format == "codex"


def test_listing_shows_format_source_contributes_and_skipped(env: Env, tmp_path: Path) -> None:
    good = agent_plugin(tmp_path / "good", name="good", skills=("a", "b"))
    bad = agent_plugin(tmp_path / "bad", {"$schema": PLUGIN_SCHEMA, "name": "Bad Name"})
    twin = agent_plugin(tmp_path / "twin", name="good")
    out = run_cli(
        ["plugins", "--plugin-dir", str(good), "--plugin-dir", str(bad), "--plugin-dir", str(twin)],
        cwd=env.workspace,
        home=env.home,
    )
    assert out.rc == 0, out.stderr
    rows = {r["path"]: r for r in json.loads(out.stdout) if "format" in r}
    first = rows[str(good.resolve())]
    assert first["format"] == "agent-plugins" and first["source"] == "cli"
    assert first["contributes"]["skills"] == ["a", "b"] and first["skipped"] == []
    rejected = rows[str(bad.resolve())]
    assert rejected["skipped"][0]["what"] == "plugin" and "5.5" in rejected["skipped"][0]["reason"]
    assert "already taken" in rows[str(twin.resolve())]["skipped"][0]["reason"]


def test_folder_named_by_an_untrusted_project_is_ignored(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "cx"
    (root / "hooks.json").parent.mkdir(parents=True, exist_ok=True)
    (root / "hooks.json").write_text(json.dumps(_hooks(env, "proj-cx")))
    _codex(root, env, {"name": "cxp", "hooks": "./hooks.json"})
    (env.workspace / ".mycode").mkdir()
    (env.workspace / ".mycode" / "config.toml").write_text(f'plugin_dirs = ["{root}"]\n')
    result = env.run([bash("echo hi"), {"content": "ok"}])
    assert env.log("proj-cx") == []
    assert len([n for n in notices(result) if "plugin folder" in n]) == 1
    env.trust()
    env.run([bash("echo hi"), {"content": "ok"}], "--trust")
    assert len(env.log("proj-cx")) == 1


def test_validate_exits_2_when_there_is_no_plugin(env: Env, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for target in (empty, tmp_path / "missing"):
        out = run_cli(["plugins", "validate", str(target)], cwd=env.workspace, home=env.home)
        assert out.rc == 2 and "holds no plugin" in out.stderr and out.stdout == ""
    cc = tmp_path / "cc"
    (cc / "skills").mkdir(parents=True)
    skill(cc / "skills", "s")
    out = run_cli(["plugins", "validate", str(cc)], cwd=env.workspace, home=env.home)
    assert out.rc == 0 and json.loads(out.stdout) == {
        "format": "claude-code",
        "name": "cc",
        "fatal": [],
        "warnings": [],
    }


def _display_named(folder: Path, name: str, title: str) -> None:
    """A skill whose ``name`` is a display name, as Claude Code plugins write them."""
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {title}\ndescription: how to {name}\n---\nSteps for {name}.\n")


def test_display_named_skills_of_claude_code_and_codex_folders_load_under_folder_names(
    env: Env, tmp_path: Path
) -> None:
    cc = tmp_path / "cc"
    (cc / ".claude-plugin").mkdir(parents=True)
    (cc / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "cc"}))
    _display_named(cc / "skills", "rule-writing", "Writing Rules")
    cx = _codex(tmp_path / "cx", env, {"name": "cx", "skills": "./skills/"})
    _display_named(cx / "skills", "hook-making", "Hook Making")
    portable = agent_plugin(tmp_path / "ap", name="portable")
    _display_named(portable / "skills", "plugin-tuning", "Plugin Tuning")
    turns = [
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "rule-writing"}}]},
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "hook-making"}}]},
        {"tool_calls": [{"name": "load_skill", "arguments": {"name": "plugin-tuning"}}]},
        {"content": "ok"},
    ]
    dirs = ("--plugin-dir", str(cc), "--plugin-dir", str(cx), "--plugin-dir", str(portable))
    result = env.run(turns, *dirs)
    assert result.rc == 0, result.stderr
    loaded = result.of_type("tool_result")
    assert [r["is_error"] for r in loaded] == [False, False, True], loaded
    assert "Steps for rule-writing." in str(loaded[0]["content"])
    assert "Steps for hook-making." in str(loaded[1]["content"])
    said = notices(result)
    # Claude Code and Codex use display names: no complaint; Agent Plugins keeps the spec's rule
    assert not [n for n in said if "Writing Rules" in n or "Hook Making" in n], said
    assert [n for n in said if "Plugin Tuning" in n and "name-characters" in n], said


class _HeaderLog(http.server.BaseHTTPRequestHandler):
    """Records each request's headers and answers 404: enough to see what a client sent."""

    seen: list[dict[str, str]] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        return


def test_codex_mcp_fields_become_headers_env_timeouts_and_disabled(
    env: Env, tmp_path: Path
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HeaderLog)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = tmp_path / "cx"
    clock = wrapper_server(root)
    clock.update({"env_vars": ["CX_PASS", "CX_UNSET"], "startup_timeout_sec": 30})
    servers = {
        "web": {
            "url": f"http://127.0.0.1:{server.server_address[1]}/mcp",
            "bearer_token_env_var": "CX_TOKEN",
            "env_http_headers": {"X-Team": "CX_TEAM"},
            "http_headers": {"X-Fixed": "yes"},
            "tool_timeout_sec": 5,
        },
        "off": {"command": str(tmp_path / "never-started"), "enabled": False},
        "clock": clock,
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    _codex(root, env, {"name": "cx", "mcpServers": "./.mcp.json"})
    variables: dict[str, str | None] = {"CX_TOKEN": "tok", "CX_TEAM": "blue", "CX_PASS": "p1"}
    try:
        result = env.run([{"content": "ok"}], "--plugin-dir", str(root), env=variables)
    finally:
        server.shutdown()
    assert result.rc == 0, result.stderr
    sent = _HeaderLog.seen[0]
    assert sent["authorization"] == "Bearer tok" and sent["x-team"] == "blue"
    assert sent["x-fixed"] == "yes"
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__cx_clock__") for t in tools), notices(result)
    assert not any("off" in n for n in notices(result)), notices(result)
    seen = json.loads((env.home / "plugin-data" / "cx" / "seen.json").read_text())
    assert seen["env"]["CX_PASS"] == "p1" and "CX_UNSET" not in seen["env"]


def test_a_plugins_mcp_json_without_the_mcpservers_wrapper(env: Env, tmp_path: Path) -> None:
    """As the official GitHub plugin writes it: ``{"github": {"type": "http", ...}}``."""
    root = tmp_path / "bare"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "bare"}')
    clock = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]}
    (root / ".mcp.json").write_text(json.dumps({"clock": clock, "note": "not a server"}))
    folder = read_folder(root, "cli", env.home)
    assert sorted(folder.mcp_servers) == ["bare_clock"]
    result = env.run([{"content": "ok"}], "--plugin-dir", str(root))
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__bare_clock__") for t in tools), notices(result)


def test_claude_code_manifest_skills_add_to_skills_and_commands_agents_replace_theirs(
    env: Env, tmp_path: Path
) -> None:
    """Claude Code 2.1.136: "Fixed a ``skills`` entry in ``plugin.json`` hiding the plugin's
    default ``skills/`` directory" — a manifest's ``skills`` paths add to ``skills/`` (they
    replaced it: ``unlisted`` was lost). Its ``commands`` and ``agents`` paths still replace
    ``commands/`` and ``agents/`` ("a custom path replaces the default directory"), which
    ``skipped`` says, as Claude Code warns of a default folder the manifest hides; a manifest
    keeps a default folder by naming it, and a folder named twice loads once."""
    root = tmp_path / "cc"
    for folder, name in (("commands", "base"), ("extra-commands", "more")):
        (root / folder).mkdir(parents=True)
        (root / folder / f"{name}.md").write_text(f"Do {name}.\n")
    for folder, name in (("agents", "critic"), ("team-agents", "planner")):
        (root / folder).mkdir(parents=True)
        (root / folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: d\n---\nX\n")
    skill(root / "skills", "style")
    skill(root / "skills", "unlisted")
    skill(root / "extra-skills", "lint")
    (root / ".claude-plugin").mkdir()
    manifest = {
        "name": "cc",
        "commands": ["./extra-commands", "./commands/base.md"],
        "agents": "./team-agents",
        "skills": ["./skills/style", "./extra-skills", "./extra-skills/"],
    }
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    folder = read_folder(root, "cli", env.home)
    assert sorted(p.name for p in folder.commands) == ["base.md", "more.md"]
    assert sorted(d.name for d in folder.agent_dirs) == ["team-agents"]
    out = run_cli(["plugins", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    row = [r for r in json.loads(out.stdout) if r.get("name") == "cc"][0]
    assert sorted(row["contributes"]["commands"]) == ["base", "more"]
    assert sorted(row["contributes"]["skills"]) == ["lint", "style", "unlisted"]
    assert [item["what"] for item in row["skipped"]] == ["agents/"]  # commands/ is named
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "cc", "skills": []}')
    assert read_folder(root, "cli", env.home).skill_names() == ["style", "unlisted"]


def test_claude_code_manifest_hooks_add_to_hooks_json_which_loads_once(
    env: Env, tmp_path: Path
) -> None:
    """Claude Code always loads ``hooks/hooks.json``; a manifest's ``hooks`` (a path, a list
    of paths, inline) add to it (they replaced it), and the manifest naming that file again
    loads it once."""
    root = tmp_path / "cc"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "hooks.json").write_text(json.dumps(_hooks(env, "base")))
    (root / "extra").mkdir()
    (root / "extra" / "more.json").write_text(json.dumps(_hooks(env, "more")))
    (root / ".claude-plugin").mkdir()
    twice = ["./hooks/hooks.json", "./extra/more.json", "./hooks/../hooks/hooks.json"]
    manifests = [
        ({"hooks": "./extra/more.json"}, "more"),
        ({"hooks": twice}, "more"),
        ({"hooks": _hooks(env, "inline")}, "inline"),
        ({"hooks": _hooks(env, "bare")["hooks"]}, "bare"),  # the events right under "hooks"
    ]
    for manifest, added in manifests:
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "cc", **manifest}))
        assert read_folder(root, "cli", env.home).hook_set.count() == 2
        for log in ("base", added):
            env.log_path(log).unlink(missing_ok=True)
        result = env.run([bash("echo hi"), {"content": "ok"}], "--plugin-dir", str(root))
        assert result.rc == 0, result.stderr
        assert len(env.log("base")) == 1 and len(env.log(added)) == 1, (manifest, notices(result))


def test_skill_folders_a_manifest_lists_one_by_one_are_listed_once(
    env: Env, tmp_path: Path
) -> None:
    """A Claude Code manifest may name each skill folder (``"skills": ["./skills/deck"]``)
    besides the default ``skills/`` that already holds it: each skill is listed once."""
    root = tmp_path / "slides"
    for name in ("deck", "notes"):
        skill(root / "skills", name)
    (root / ".claude-plugin").mkdir()
    manifest = {"name": "slides", "skills": ["./skills/deck", "./skills/notes"]}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    out = run_cli(["plugins", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    row = [r for r in json.loads(out.stdout) if r.get("name") == "slides"][0]
    assert row["contributes"]["skills"] == ["deck", "notes"]


def test_a_manifest_path_that_does_not_exist_is_a_warning(env: Env, tmp_path: Path) -> None:
    """A misspelt path in ``plugin.json`` (``"commands": "./cmds"``) was dropped without a
    word: ``plugins validate`` said the folder was fine. The default folders may be missing."""
    root = tmp_path / "typo"
    (root / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": "typo", "commands": "./cmds", "hooks": "./hooks/main.json"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    warnings = [w["message"] for w in json.loads(out.stdout)["warnings"]]
    assert warnings == [
        "the manifest names './hooks/main.json', which does not exist; ignored",
        "the manifest names './cmds', which does not exist; ignored",
    ]


def test_a_plugin_dir_that_holds_no_plugin_is_one_notice(env: Env, tmp_path: Path) -> None:
    """``--plugin-dir`` of a marketplace's root (the claude-code repository) or of an empty
    folder loaded as an empty plugin, without a word; now one notice says so, and for a
    marketplace how to install from it."""
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text('{"name": "m", "plugins": []}')
    (tmp_path / "empty").mkdir()
    args = ["--plugin-dir", str(market), "--plugin-dir", str(tmp_path / "empty")]
    result = env.run([{"content": "ok"}], *args)
    assert result.rc == 0, result.stderr
    found = [n for n in notices(result) if "holds no plugin" in n]
    assert len(found) == 2
    assert "It is a marketplace: `mycode plugins marketplace add" in found[0]
    assert "marketplace" not in found[1]
    listing = run_cli(["plugins", *args], cwd=env.workspace, home=env.home)
    assert not [r for r in json.loads(listing.stdout) if r.get("format")]


def _skill_file(folder: Path, name: str, text: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(text)


def _skill_warnings(report: dict[str, object]) -> dict[str, str]:
    """The skill warnings of a validate report, by skill folder."""
    found: dict[str, str] = {}
    for item in report["warnings"]:  # type: ignore[attr-defined]
        if item["section"] in ("skills", "7.1") and "skills/" in item["message"]:
            folder = item["message"].split("(skills/", 1)[1].split(")", 1)[0]
            found[folder] = item["message"]
    return found


def test_validate_reports_skill_problems_as_warnings(env: Env, tmp_path: Path) -> None:
    """Broken front matter, a name differing from its folder, an over-long description, an
    optional field of the wrong type, no front matter: each one warning with its rule (a run
    of a Claude Code folder keeps quiet about them), never fatal."""
    cc = tmp_path / "cc"
    (cc / ".claude-plugin").mkdir(parents=True)
    (cc / ".claude-plugin" / "plugin.json").write_text('{"name": "cc"}')
    skills = cc / "skills"
    skill(skills, "fine")
    _skill_file(skills, "broken", "---\nname: broken\ndescription: d\nmetadata: {a: [b\n---\nx\n")
    _skill_file(skills, "other-folder", "---\nname: renamed-skill\ndescription: d\n---\nx\n")
    _skill_file(skills, "wordy", f"---\nname: wordy\ndescription: {'w ' * 600}\n---\nx\n")
    _skill_file(skills, "typed", "---\nname: typed\ndescription: d\nlicense: [MIT]\n---\nx\n")
    _skill_file(skills, "plain", "# Plain\n\nDoes plain things.\n")
    out = run_cli(["plugins", "validate", str(cc)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["fatal"] == [] and report["format"] == "claude-code"
    found = _skill_warnings(report)
    assert set(found) == {"broken", "other-folder", "wordy", "typed", "plain"}
    assert "is not loaded" in found["broken"] and "[rule yaml]" in found["broken"]
    assert "loads, but" in found["other-folder"] and "[rule name-folder]" in found["other-folder"]
    assert "[rule description-length]" in found["wordy"]
    assert "[rule license-type]" in found["typed"]
    assert "[rule frontmatter]" in found["plain"] and "loads, but" in found["plain"]
    assert all(set(item) == {"message", "section"} for item in report["warnings"])


def test_validate_an_agent_plugins_folders_non_conforming_skills(env: Env, tmp_path: Path) -> None:
    """In an Agent Plugins folder such a skill is skipped (its §7.1): a warning in section
    7.1 saying so, the plugin still valid; without the skills plugin, no skill check."""
    root = agent_plugin(tmp_path / "ap", skills=("good",))
    _skill_file(root / "skills", "mismatch", "---\nname: other-name\ndescription: d\n---\nx\n")
    _skill_file(root / "skills", "plain", "Does plain things.\n")
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    report = json.loads(out.stdout)
    found = _skill_warnings(report)
    assert set(found) == {"mismatch", "plain"} and report["fatal"] == []
    assert all("is not loaded" in message for message in found.values())
    assert {i["section"] for i in report["warnings"] if "skills/" in i["message"]} == {"7.1"}
    off = run_cli(
        ["plugins", "validate", str(root)],
        cwd=env.workspace,
        home=env.home,
        env={"MYCODE_DISABLE_PLUGINS": "skills"},
    )
    assert off.rc == 0 and _skill_warnings(json.loads(off.stdout)) == {}


def test_claude_code_parts_mycode_does_not_run_are_named_in_skipped(
    env: Env, tmp_path: Path
) -> None:
    """Output styles, monitors, default ``settings.json``, workflows and plugin options of a
    Claude Code folder are not used: ``skipped`` says so instead of nothing (``bin/`` is)."""
    root = tmp_path / "cc"
    (root / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": "cc", "userConfig": {"token": {"type": "string", "title": "Token"}}}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    for folder_name in ("output-styles", "monitors", "bin", "workflows", "commands"):
        (root / folder_name).mkdir()
    (root / "settings.json").write_text('{"agent": "reviewer"}')
    (root / "commands" / "hi.md").write_text("Say hi.\n")
    folder = read_folder(root, "cli", env.home)
    skipped = {s["what"]: s["reason"] for s in folder.skipped}
    assert set(skipped) == {
        "output styles",
        "monitors",
        "settings.json",
        "workflows",
        "userConfig",
    }
    assert all(reason for reason in skipped.values())
    assert folder.commands and folder.bin_dir == root / "bin"  # what mycode reads still loads
    (root / "monitors").rmdir()
    (root / "settings.json").unlink()
    manifest = {"name": "cc", "experimental": {"monitors": [{"name": "m", "command": "true"}]}}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    skipped = {s["what"] for s in read_folder(root, "cli", env.home).skipped}
    assert "monitors" in skipped and "userConfig" not in skipped and "settings.json" not in skipped
