"""Agent Plugins 1.0.0 folders (SPEC §11): the client conformance checklist, item by item.

Appendix A of the Agent Plugins Specification, and the test of each item:

Plugin loader
- Parse and validate plugin.json (§5.1, §5.2): test_manifest_not_json_rejects_the_plugin,
  test_manifest_without_recognised_schema_rejects_the_folder, test_wrong_types_are_fatal
- Validate required $schema and name (§5.3): test_missing_required_fields_are_fatal
- Plugin name constraints (§5.5): test_name_rules
- Report and ignore unknown plugin.json fields (§5.2):
  test_unknown_fields_and_non_object_extensions_are_warnings
- Ignore unimplemented extensions namespaces without validating their values (§8.1):
  test_extension_namespaces_are_not_validated
- Reject package paths resolving outside the root (§4.1): test_paths_outside_the_root_are_refused,
  test_command_outside_the_root_skips_the_server
- Discover implemented file-based extensions (§8.2): mycode implements no namespace, so an
  extension directory is ignored: test_extension_directory_is_ignored

Component discovery
- Scan the fixed location of each component type (§6.1):
  test_skills_become_skills_with_the_plugin_shown, test_stdio_server_runs_with_root_and_data
- Ignore missing fixed locations (§6.2): test_missing_locations_are_not_errors,
  test_wrong_kind_of_location_skips_that_type

MCP configuration
- Select a supported $schema, validate closed mcp.json and each variant (§7.2.1):
  test_mcp_json_top_level_problems_disable_mcp_only, test_invalid_server_entries_are_skipped
- At least one of stdio / streamable-http (§7.2.1): test_stdio_server_runs_with_root_and_data,
  test_remote_servers_keep_their_transport
- Use each entry's declared transport (§7.2.1): test_remote_servers_keep_their_transport
- Remote URL and literal-header rules (§7.2.1): test_remote_url_rules,
  test_headers_are_literal_and_a_placeholder_warns

Environment and expansion
- PLUGIN_ROOT and a dedicated writable PLUGIN_DATA (§9.1): test_stdio_server_runs_with_root_and_data
- command one bare or ./ token (§7.2.1): test_command_must_be_one_token
- Plugin root as the default cwd (§7.2.1): test_stdio_server_runs_with_root_and_data
- Explicit cwd forms and containment (§7.2.1): test_cwd_forms
- Overlay configured env on the base environment (§9.1): test_stdio_server_runs_with_root_and_data
- PLUGIN_ROOT/PLUGIN_DATA set after configured env (§9.1): test_reserved_env_names_are_invalid,
  test_stdio_server_runs_with_root_and_data
- Configured PATH does not affect bare-command resolution (§7.2.1): test_bare_command_is_kept_bare
- Expand only ${PLUGIN_ROOT}/${PLUGIN_DATA} in args, env, cwd (§9.2): test_expansion_is_narrow

Resilience
- Ignore unsupported component types (§11.3): test_extension_directory_is_ignored (and a
  ``hooks/`` folder is not read: test_unsupported_components_are_ignored)
- Skip entries with an unsupported transport (§7.2.2): test_invalid_server_entries_are_skipped
- Continue when an independent component fails (§11.3): test_a_failing_server_skips_only_itself
- Support at least one component type (§11.1): test_skills_become_skills_with_the_plugin_shown
- Skip a skill not conforming to the Agent Skills specification (§7.1):
  test_a_non_conforming_skill_is_skipped_where_other_hosts_would_warn
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ap_helpers import (
    MCP_SCHEMA,
    PLUGIN_SCHEMA,
    agent_plugin,
    skill,
    wrapper_server,
)
from cc_helpers import Env, notices
from mycode_claude_compat.folders import PluginFolder, read_folder

from mycode_core.testing import run_cli


def _read(root: Path, home: Path) -> PluginFolder:
    return read_folder(root, "cli", home)


def _validate(root: Path, env: Env) -> tuple[int, dict[str, Any] | None, str]:
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    report = json.loads(out.stdout) if out.stdout.strip() else None
    return out.rc, report, out.stderr


def test_manifest_not_json_rejects_the_plugin(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p", skills=("one",))
    (root / "plugin.json").write_text("{ not json")
    folder = _read(root, env.home)
    assert folder.rejected and folder.skill_dirs == []
    rc, report, stderr = _validate(root, env)
    assert rc == 1 and report is not None and "Traceback" not in stderr
    assert report["format"] == "agent-plugins"
    assert report["fatal"][0]["section"] == "5.2"


def test_manifest_without_recognised_schema_rejects_the_folder(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(
        tmp_path / "p",
        {"$schema": "https://agent-plugins.org/schemas/9.0.0/plugin.schema.json", "name": "x"},
        skills=("one",),
    )
    folder = _read(root, env.home)
    assert folder.rejected and "schema" in folder.fatal[0].message
    # a skill folder's own plugin.json, as some published collections ship one: the line says
    # what is missing and where the other formats' manifests live (not "None")
    (root / "plugin.json").write_text(json.dumps({"name": "x"}))
    folder = _read(root, env.home)
    assert folder.rejected
    assert "it has no $schema" in folder.fatal[0].message and "None" not in folder.fatal[0].message
    assert ".claude-plugin/" in folder.fatal[0].message


def test_missing_required_fields_are_fatal(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p", {"$schema": PLUGIN_SCHEMA}, skills=("one",))
    folder = _read(root, env.home)
    assert folder.rejected and folder.fatal[0].section == "5.3"
    assert "name" in folder.fatal[0].message


def test_wrong_types_are_fatal(env: Env, tmp_path: Path) -> None:
    for bad in (
        {"version": 1},
        {"keywords": "a"},
        {"author": {"name": "a", "phone": "1"}},
        {"license": ["MIT"]},
        {"extensions": {"com.example": "not an object"}},
    ):
        root = agent_plugin(
            tmp_path / f"p{len(os.listdir(tmp_path))}",
            {"$schema": PLUGIN_SCHEMA, "name": "ok", **bad},
            skills=("one",),
        )
        folder = _read(root, env.home)
        assert folder.rejected, bad
        assert folder.skill_dirs == [] and folder.mcp_servers == {}


def test_name_rules(env: Env, tmp_path: Path) -> None:
    good = ["my-plugin", "acme.tools", "lint3r", "a", "a" * 64]
    bad = ["My Plugin", "My-Plugin", "-start", "end-", "a--b", "a..b", "", "a" * 65, "a_b"]
    for index, name in enumerate(good + bad):
        root = agent_plugin(tmp_path / f"n{index}", {"$schema": PLUGIN_SCHEMA, "name": name})
        folder = _read(root, env.home)
        assert folder.rejected == (name in bad), name
        if name in bad:
            assert folder.fatal[0].section in ("5.5", "5.3"), name
            assert len(folder.fatal) == 1, (name, folder.fatal)  # "" breaks two rules: one line
    rc, report, _ = _validate(tmp_path / f"n{len(good)}", env)
    assert rc == 1 and report is not None and report["fatal"][0]["section"] == "5.5"


def test_unknown_fields_and_non_object_extensions_are_warnings(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(
        tmp_path / "p",
        {"$schema": PLUGIN_SCHEMA, "name": "ok", "hooks": "./x", "extensions": [1]},
        skills=("one",),
    )
    folder = _read(root, env.home)
    assert not folder.rejected and folder.skill_names() == ["one"]
    sections = sorted(w.section for w in folder.warnings)
    assert sections == ["5.2", "8.1"]
    rc, report, _ = _validate(root, env)
    assert rc == 0 and report is not None and report["name"] == "ok"
    assert {w["section"] for w in report["warnings"]} == {"5.2", "8.1"}
    assert report["fatal"] == []


def test_extension_namespaces_are_not_validated(env: Env, tmp_path: Path) -> None:
    manifest = {
        "$schema": PLUGIN_SCHEMA,
        "name": "ok",
        "extensions": {"com.example.client": {"anything": [1, {"deep": None}], "x": "y"}},
    }
    folder = _read(agent_plugin(tmp_path / "p", manifest), env.home)
    assert not folder.rejected and folder.warnings == []


def test_extension_directory_is_ignored(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p", skills=("one",))
    hooks = root / "com.example.client" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "hooks.json").write_text(json.dumps({"hooks": {"Stop": []}}))
    folder = _read(root, env.home)
    assert folder.hook_set.count() == 0 and folder.skill_names() == ["one"]


def test_unsupported_components_are_ignored(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p", skills=("one",))
    (root / "hooks").mkdir()
    (root / "hooks/hooks.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "false"}]}]}})
    )
    (root / "commands").mkdir()
    (root / "commands/x.md").write_text("hi")
    folder = _read(root, env.home)
    assert folder.hook_set.count() == 0 and folder.commands == []
    assert not folder.rejected and folder.warnings == []


def test_paths_outside_the_root_are_refused(env: Env, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    skill(outside, "stolen")
    root = agent_plugin(tmp_path / "p", skills=("mine",))
    (root / "skills" / "linked").symlink_to(outside / "stolen")
    inner = root / "skills" / "half"
    inner.mkdir()
    (inner / "SKILL.md").symlink_to(outside / "stolen" / "SKILL.md")
    # the user's config names the folder: trusted as the user is
    config = env.home / "config.toml"
    config.write_text(f'plugin_dirs = ["{root}"]\n')
    out = run_cli(["skills", "--json"], cwd=env.workspace, home=env.home)
    names = {s["name"]: s for s in json.loads(out.stdout)["skills"]}
    assert "mine" in names and names["mine"]["plugin"] == "demo-plugin"
    assert "stolen" not in names
    # and `mycode plugins` does not list them as contributed (it did): they are skipped
    out = run_cli(["plugins"], cwd=env.workspace, home=env.home)
    [row] = [r for r in json.loads(out.stdout) if r["name"] == "demo-plugin"]
    assert row["contributes"]["skills"] == ["mine"]
    assert sorted(item["what"] for item in row["skipped"]) == [
        "skill skills/half",
        "skill skills/linked",
    ]
    # the skills folder itself leading out: the skills type is skipped (§6.2)
    root2 = agent_plugin(tmp_path / "q", name="other")
    (root2 / "skills").symlink_to(outside)
    folder = _read(root2, env.home)
    assert folder.skill_dirs == [] and folder.warnings[0].section == "4.1"
    # plugin.json itself a link out: the plugin is rejected
    root3 = tmp_path / "r"
    root3.mkdir()
    (outside / "plugin.json").write_text(json.dumps({"$schema": PLUGIN_SCHEMA, "name": "r"}))
    (root3 / "plugin.json").symlink_to(outside / "plugin.json")
    assert _read(root3, env.home).rejected


def test_skills_become_skills_with_the_plugin_shown(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p", name="reports", skills=("summarize", "deploy"))
    (root / "skills" / "notes").mkdir()  # no SKILL.md: not a skill
    skill(root / "skills" / "deploy" / "deeper", "nested")  # not searched recursively
    (env.home / "config.toml").write_text(f'plugin_dirs = ["{root}"]\n')
    out = run_cli(["skills", "--json"], cwd=env.workspace, home=env.home)
    skills = {s["name"]: s for s in json.loads(out.stdout)["skills"]}
    assert sorted(skills) == ["deploy", "summarize"]
    assert skills["deploy"]["plugin"] == "reports"
    assert skills["deploy"]["source"] == "plugin:reports"


def _skill_text(folder: Path, front: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\nSteps.\n")


def test_a_non_conforming_skill_is_skipped_where_other_hosts_would_warn(
    env: Env, tmp_path: Path
) -> None:
    """Skills of plain locations and Codex folders load with a warning when the name differs
    from the folder, the description is too long or the name is a display name; an Agent
    Plugins folder skips them (§7.1: MUST skip, SHOULD report) and keeps the good ones."""
    root = agent_plugin(tmp_path / "p", name="strict-one", skills=("fine",))
    long = "d" * 1100
    shapes = {
        "other-folder": "name: not-the-folder\ndescription: d\n",
        "long-text": f"name: long-text\ndescription: {long}\n",
        "display-name": "name: Display Name\ndescription: d\n",
        "no-name": "description: d\n",
    }
    for folder, front in shapes.items():
        _skill_text(root / "skills" / folder, front)
    out = run_cli(["skills", "--json", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    data = json.loads(out.stdout)
    assert [s["name"] for s in data["skills"]] == ["fine"]
    for folder in shapes:
        assert any(f"skills/{folder})" in p and "not loaded" in p for p in data["problems"])
    # `mycode plugins` listed them as contributed; they are skipped, each with its reason
    out = run_cli(["plugins", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    [row] = [r for r in json.loads(out.stdout) if r["name"] == "strict-one"]
    assert row["contributes"]["skills"] == ["fine"]
    skipped = {item["what"]: item["reason"] for item in row["skipped"]}
    assert sorted(skipped) == [f"skill skills/{folder}" for folder in sorted(shapes)]
    assert "name-folder" in skipped["skill skills/other-folder"]
    # a Codex folder loads them, and shows each under the name it is listed by
    (root / "plugin.json").unlink()
    (root / ".codex-plugin").mkdir()
    (root / ".codex-plugin" / "plugin.json").write_text('{"name": "lenient"}')
    out = run_cli(["plugins", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    [row] = [r for r in json.loads(out.stdout) if r["name"] == "lenient"]
    assert row["skipped"] == []
    assert row["contributes"]["skills"] == [
        "display-name",
        "fine",
        "long-text",
        "no-name",
        "not-the-folder",
    ]
    # the same skills in a project location load (with warnings): only the plugin is strict
    project = env.workspace / ".agents" / "skills"
    for folder, front in shapes.items():
        _skill_text(project / folder, front)
    out = run_cli(["skills", "--json"], cwd=env.workspace, home=env.home)
    names = sorted(s["name"] for s in json.loads(out.stdout)["skills"])
    assert names == ["display-name", "long-text", "no-name", "not-the-folder"]


def test_missing_locations_are_not_errors(env: Env, tmp_path: Path) -> None:
    folder = _read(agent_plugin(tmp_path / "p"), env.home)
    assert not folder.rejected and folder.warnings == [] and folder.skipped == []


def test_wrong_kind_of_location_skips_that_type(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(tmp_path / "p")
    (root / "skills").write_text("not a folder")
    (root / "mcp.json").mkdir()
    folder = _read(root, env.home)
    assert not folder.rejected
    assert sorted(w.section for w in folder.warnings) == ["6.2", "6.2"]
    assert {s["what"] for s in folder.skipped} == {"skills", "mcp.json"}


def test_mcp_json_top_level_problems_disable_mcp_only(env: Env, tmp_path: Path) -> None:
    cases: list[Any] = [
        "{ nope",
        {"mcpServers": {}},
        {"$schema": "https://agent-plugins.org/schemas/2.0.0/mcp.schema.json", "mcpServers": {}},
        {"$schema": MCP_SCHEMA, "mcpServers": {}, "extra": 1},
        {"$schema": MCP_SCHEMA},
    ]
    for index, doc in enumerate(cases):
        root = agent_plugin(tmp_path / f"p{index}", skills=("kept",))
        (root / "mcp.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
        folder = _read(root, env.home)
        assert not folder.rejected and folder.skill_names() == ["kept"], doc
        assert folder.mcp_servers == {} and folder.skipped[0]["what"] == "mcp.json", doc
    empty = agent_plugin(tmp_path / "empty", mcp={})
    assert _read(empty, env.home).warnings == []


def test_invalid_server_entries_are_skipped(env: Env, tmp_path: Path) -> None:
    servers = {
        "good": {"type": "stdio", "command": "true"},
        "ws": {"type": "websocket", "url": "wss://x.example/mcp"},
        "notype": {"command": "true"},
        "mixed": {"type": "stdio", "command": "true", "url": "https://x.example"},
        "http_with_cmd": {"type": "streamable-http", "url": "https://x.example", "command": "x"},
        "args_not_list": {"type": "stdio", "command": "true", "args": "a"},
    }
    folder = _read(agent_plugin(tmp_path / "p", name="pl", mcp=servers), env.home)
    assert sorted(folder.mcp_servers) == ["pl_good"]
    skipped = {s["what"] for s in folder.skipped}
    assert skipped == {f"mcp server {n}" for n in servers if n != "good"}
    assert any("not supported" in s["reason"] for s in folder.skipped)


def test_command_must_be_one_token(env: Env, tmp_path: Path) -> None:
    servers = {
        "spaces": {"type": "stdio", "command": "python -m server"},
        "abs": {"type": "stdio", "command": "/usr/bin/true"},
        "rel": {"type": "stdio", "command": "bin/server"},
        "placeholder": {"type": "stdio", "command": "${PLUGIN_ROOT}/bin/server"},
        "bare": {"type": "stdio", "command": "node"},
        "dot": {"type": "stdio", "command": "./bin/server"},
    }
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    folder = _read(root, env.home)
    assert sorted(folder.mcp_servers) == ["pl_bare", "pl_dot"]
    assert folder.mcp_servers["pl_dot"]["command"] == str(root.resolve() / "bin" / "server")
    rc, report, _ = _validate(root, env)
    assert rc == 0 and report is not None
    assert sum("skipped" in w["message"] for w in report["warnings"]) == 4


def test_bare_command_is_kept_bare(env: Env, tmp_path: Path) -> None:
    servers = {"s": {"type": "stdio", "command": "node", "env": {"PATH": "/nowhere"}}}
    entry = _read(agent_plugin(tmp_path / "p", name="pl", mcp=servers), env.home).mcp_servers
    assert entry["pl_s"]["command"] == "node" and entry["pl_s"]["env"]["PATH"] == "/nowhere"


def test_command_outside_the_root_skips_the_server(env: Env, tmp_path: Path) -> None:
    root = agent_plugin(
        tmp_path / "p",
        name="pl",
        mcp={
            "up": {"type": "stdio", "command": "./../x"},
            "link": {"type": "stdio", "command": "./bin/link"},
        },
    )
    (root / "bin").mkdir()
    (root / "bin" / "link").symlink_to("/usr/bin/true")
    folder = _read(root, env.home)
    assert folder.mcp_servers == {}
    assert all("outside" in s["reason"] for s in folder.skipped)


def test_cwd_forms(env: Env, tmp_path: Path) -> None:
    servers = {
        "rel": {"type": "stdio", "command": "true", "cwd": "./data"},
        "root": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_ROOT}"},
        "data": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_DATA}/sub"},
        "plain": {"type": "stdio", "command": "true", "cwd": "data"},
        "abs": {"type": "stdio", "command": "true", "cwd": "/tmp"},
        "escape": {"type": "stdio", "command": "true", "cwd": "./../.."},
        "data_escape": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_DATA}/../.."},
    }
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    (root / "data").mkdir()
    folder = _read(root, env.home)
    assert sorted(folder.mcp_servers) == ["pl_data", "pl_rel", "pl_root"]
    real = root.resolve()
    assert folder.mcp_servers["pl_rel"]["cwd"] == str(real / "data")
    assert folder.mcp_servers["pl_root"]["cwd"] == str(real)
    data = env.home / "plugin-data" / "pl"
    assert folder.mcp_servers["pl_data"]["cwd"] == str(data / "sub")


def test_reserved_env_names_are_invalid(env: Env, tmp_path: Path) -> None:
    servers = {
        "bad": {"type": "stdio", "command": "true", "env": {"PLUGIN_ROOT": "/x"}},
        "ok": {"type": "stdio", "command": "true", "env": {"A": "1"}},
    }
    folder = _read(agent_plugin(tmp_path / "p", name="pl", mcp=servers), env.home)
    assert sorted(folder.mcp_servers) == ["pl_ok"]
    assert "PLUGIN_ROOT" in folder.skipped[0]["reason"]
    env_ok = folder.mcp_servers["pl_ok"]["env"]
    assert list(env_ok)[-2:] == ["PLUGIN_ROOT", "PLUGIN_DATA"] and env_ok["A"] == "1"


def test_expansion_is_narrow(env: Env, tmp_path: Path) -> None:
    servers = {
        "s": {
            "type": "stdio",
            "command": "true",
            "args": [
                "${PLUGIN_ROOT}/a",
                "${PLUGIN_DATA}",
                "${HOME}",
                "$PLUGIN_ROOT",
                "${PLUGIN_X}",
            ],
            "env": {"K": "${PLUGIN_DATA}/k", "${PLUGIN_ROOT}": "key kept", "H": "${HOME}"},
        }
    }
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    entry = _read(root, env.home).mcp_servers["pl_s"]
    data = str(env.home / "plugin-data" / "pl")
    real = str(root.resolve())
    assert entry["args"] == [f"{real}/a", data, "${HOME}", "$PLUGIN_ROOT", "${PLUGIN_X}"]
    assert entry["env"]["K"] == f"{data}/k" and entry["env"]["H"] == "${HOME}"
    assert entry["env"]["${PLUGIN_ROOT}"] == "key kept" and entry["literal"] is True
    # the bridge keeps a literal entry's other ${...} as written (its own tests check that)


def test_remote_url_rules(env: Env, tmp_path: Path) -> None:
    urls = {
        "https": "https://mcp.example.com/mcp",
        "loop": "http://127.0.0.1:9/mcp",
        "localhost": "http://localhost:9/mcp",
        "v6": "http://[::1]:9/mcp",
        "plain_http": "http://mcp.example.com/mcp",
        "userinfo": "https://me:pw@mcp.example.com/mcp",
        "fragment": "https://mcp.example.com/mcp#x",
        "relative": "/mcp",
        "ftp": "ftp://mcp.example.com/",
    }
    servers = {n: {"type": "streamable-http", "url": u} for n, u in urls.items()}
    folder = _read(agent_plugin(tmp_path / "p", name="pl", mcp=servers), env.home)
    assert sorted(folder.mcp_servers) == ["pl_https", "pl_localhost", "pl_loop", "pl_v6"]


def test_remote_servers_keep_their_transport(env: Env, tmp_path: Path) -> None:
    servers = {
        "h": {"type": "streamable-http", "url": "https://a.example/mcp"},
        "s": {"type": "sse", "url": "https://a.example/sse"},
    }
    folder = _read(agent_plugin(tmp_path / "p", name="pl", mcp=servers), env.home)
    kinds = {n: (e["type"], e["url"]) for n, e in folder.mcp_servers.items()}
    assert kinds == {
        "pl_h": ("http", "https://a.example/mcp"),
        "pl_s": ("sse", "https://a.example/sse"),
    }


def test_headers_are_literal_and_a_placeholder_warns(env: Env, tmp_path: Path) -> None:
    servers = {
        "h": {
            "type": "streamable-http",
            "url": "https://a.example/mcp",
            "headers": {"X-Tenant": "public", "Authorization": "Bearer ${TOKEN}"},
        },
        "dup": {
            "type": "sse",
            "url": "https://a.example/sse",
            "headers": {"X-A": "1", "x-a": "2"},
        },
        "badname": {"type": "sse", "url": "https://a.example/sse", "headers": {"X A": "1"}},
    }
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    folder = _read(root, env.home)
    assert sorted(folder.mcp_servers) == ["pl_h"]
    entry = folder.mcp_servers["pl_h"]
    assert entry["headers"]["Authorization"] == "Bearer ${TOKEN}" and entry["literal"] is True
    rc, report, _ = _validate(root, env)
    assert rc == 0 and report is not None
    assert any("literally" in w["message"] for w in report["warnings"])


def test_stdio_server_runs_with_root_and_data(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "clock"
    root.mkdir()
    entry = wrapper_server(root)
    entry["env"] = {"FROM_CONFIG": "${PLUGIN_ROOT}/cfg", "PLUGIN_MARK": "yes"}
    agent_plugin(root, name="clock", mcp={"time": entry})
    result = env.run([{"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__clock_time__") for t in tools), (tools, notices(result))
    data = env.home / "plugin-data" / "clock"
    seen = json.loads((data / "seen.json").read_text())
    real = str(root.resolve())
    assert seen["cwd"] == real
    assert seen["env"]["PLUGIN_ROOT"] == real and seen["env"]["PLUGIN_DATA"] == str(data)
    assert seen["env"]["FROM_CONFIG"] == f"{real}/cfg" and seen["env"]["PLUGIN_MARK"] == "yes"
    assert "PATH" in seen["env"]  # configured env overlays a base environment
    assert os.access(data, os.W_OK)


def test_a_failing_server_skips_only_itself(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    root.mkdir()
    (root / "bin").mkdir()
    (root / "bin" / "dies").write_text("#!/bin/sh\nexit 3\n")
    (root / "bin" / "dies").chmod(0o755)
    servers = {
        "broken": {"type": "stdio", "command": "./bin/dies"},
        "time": wrapper_server(root),
    }
    agent_plugin(root, name="mixed", skills=("still-here",), mcp=servers)
    result = env.run([{"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__mixed_time__") for t in tools), (tools, notices(result))
    assert not any(t.startswith("mcp__mixed_broken__") for t in tools)
    assert any("broken" in n for n in notices(result))
