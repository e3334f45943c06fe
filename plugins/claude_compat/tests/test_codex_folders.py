"""Codex plugin folders laid out as Codex itself reads them (``codex-rs/core-plugins``): the
forms of ``.codex-plugin/plugin.json`` and ``.mcp.json`` that real Codex plugins use (SPEC §11).
Our own fixtures, written after Codex's documented rules — no copied plugin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ap_helpers import skill, wrapper_server
from cc_helpers import Env, bash, notices
from mycode_claude_compat.folders import read_folder

from mycode_core.testing import run_cli


def _codex(root: Path, manifest: dict[str, Any], mcp: dict[str, Any] | None = None) -> Path:
    (root / ".codex-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps(manifest))
    if mcp is not None:
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": mcp}))
    return root


def _stop_hook(env: Env, name: str) -> dict[str, Any]:
    return {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": env.hook(name)}]}]}}


def _listed_skills(env: Env, root: Path) -> list[str]:
    """The skill names ``mycode skills --json --plugin-dir ROOT`` lists, sorted."""
    out = run_cli(["skills", "--json", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    return sorted(s["name"] for s in json.loads(out.stdout)["skills"])


def test_a_relative_mcp_cwd_is_the_plugin_folder_not_where_mycode_runs(
    env: Env, tmp_path: Path
) -> None:
    """``"cwd": "."`` with ``node ./mcp/server.mjs`` is how Codex plugins start a bundled
    server; Codex joins a relative ``cwd`` to the plugin root."""
    root = tmp_path / "cx"
    server = wrapper_server(root)
    server.pop("type")
    server["cwd"] = "."
    _codex(root, {"name": "cx", "mcpServers": "./.mcp.json"}, {"clock": server})
    result = env.run([{"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__cx_clock__") for t in tools), notices(result)
    seen = json.loads((env.home / "plugin-data" / "cx" / "seen.json").read_text())
    assert seen["cwd"] == str(root.resolve())


def test_a_relative_mcp_cwd_leading_out_of_the_folder_skips_that_server(
    env: Env, tmp_path: Path
) -> None:
    root = _codex(
        tmp_path / "cx",
        {"name": "cx"},
        {"out": {"command": "true", "cwd": "../elsewhere"}, "in": {"command": "true"}},
    )
    folder = read_folder(root, "cli", env.home)
    assert sorted(folder.mcp_servers) == ["cx_in"]
    assert [s["what"] for s in folder.skipped] == ["mcp server out"]


def test_hooks_given_as_a_list_of_inline_objects_all_run(env: Env, tmp_path: Path) -> None:
    """Codex's manifest ``hooks`` may be a path, a list of paths, one inline object or a list
    of inline objects."""
    root = _codex(
        tmp_path / "cx",
        {"name": "cx", "hooks": [_stop_hook(env, "first"), _stop_hook(env, "second")]},
    )
    assert read_folder(root, "cli", env.home).hooks == 2
    result = env.run([{"content": "done"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    assert len(env.log("first")) == 1 and len(env.log("second")) == 1


def test_a_manifest_skills_path_replaces_the_default_skills_folder(
    env: Env, tmp_path: Path
) -> None:
    """Codex reads the manifest's ``skills`` instead of ``skills/`` (and ``skills/`` when the
    manifest names none)."""
    root = tmp_path / "cx"
    skill(root / "skills", "default-one")
    skill(root / "extra", "extra-one")
    _codex(root, {"name": "cx", "skills": "./extra/"})
    assert _listed_skills(env, root) == ["extra-one"]
    _codex(root, {"name": "cx"})
    assert _listed_skills(env, root) == ["default-one"]


def test_a_plugins_hooks_get_plugin_data(env: Env, tmp_path: Path) -> None:
    """Codex gives a plugin's hooks ``PLUGIN_ROOT``, ``PLUGIN_DATA`` and the ``CLAUDE_``
    spellings of both; a hook keeping state in ``$PLUGIN_DATA`` needs the folder to exist."""
    root = tmp_path / "cx"
    (root / "hooks").mkdir(parents=True)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": env.hook("pre")}]}]}
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    _codex(root, {"name": "cx"})
    result = env.run([bash("echo hi"), {"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    [record] = env.log("pre")
    data = env.home / "plugin-data" / "cx"
    assert record["PLUGIN_DATA"] == record["CLAUDE_PLUGIN_DATA"] == str(data)
    assert data.is_dir()


def test_apps_commands_and_agents_are_listed_as_skipped(env: Env, tmp_path: Path) -> None:
    """What a Codex folder has that mycode does not read is named, not dropped silently."""
    root = _codex(tmp_path / "cx", {"name": "cx", "apps": "./.app.json"})
    (root / ".app.json").write_text(json.dumps({"apps": {"a": {"id": "connector_1"}}}))
    for part in ("commands", "agents"):
        (root / part).mkdir()
        (root / part / "x.md").write_text("---\ndescription: x\n---\nDo x.\n")
    out = run_cli(
        ["plugins", "--json", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home
    )
    assert out.rc == 0, out.stderr
    [row] = [r for r in json.loads(out.stdout) if r.get("format") == "codex"]
    assert [s["what"] for s in row["skipped"]] == ["apps", "commands", "agents"]
    assert "Codex plugin's commands are not read" in row["skipped"][1]["reason"]


def test_skills_nested_below_the_first_level_load_as_codex_finds_them(
    env: Env, tmp_path: Path
) -> None:
    """Codex scans a plugin's skills folder breadth first, six levels deep (a family of skills
    under ``skills/sdk/web/SKILL.md``, ``skills/sdk/web/embedded/SKILL.md``)."""
    root = tmp_path / "cx"
    skill(root / "skills", "sdk")
    skill(root / "skills" / "sdk", "sdk-web")
    skill(root / "skills" / "sdk" / "sdk-web", "sdk-web-embedded")
    skill(root / "skills" / "shared", "citations")  # a grouping folder without SKILL.md
    skill(root / "skills" / ".drafts", "draft")  # hidden: skipped, as Codex skips it
    skill(root / "skills" / "a" / "b" / "c" / "d" / "e" / "f", "too-deep")  # level 7
    _codex(root, {"name": "cx", "skills": "./skills/"})
    assert _listed_skills(env, root) == ["citations", "sdk", "sdk-web", "sdk-web-embedded"]
    assert read_folder(root, "cli", env.home).skill_names() == [
        "citations",
        "sdk",
        "sdk-web",
        "sdk-web-embedded",
    ]


def test_a_path_the_manifest_names_that_is_missing_is_reported(env: Env, tmp_path: Path) -> None:
    """A manifest naming ``./hooks.json`` or ``./extra-skills`` that is not there: one
    warning each (the plugin's hooks would otherwise silently never run); the default
    folders (``skills/``, ``.mcp.json``) may be absent without a word."""
    root = _codex(
        tmp_path / "cx",
        {
            "name": "cx",
            "hooks": "./hooks.json",
            "skills": "./extra-skills",
            "mcpServers": "./m.json",
        },
    )
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    warnings = [w["message"] for w in json.loads(out.stdout)["warnings"]]
    assert sorted(warnings) == sorted(
        f"the manifest names {item!r}, which does not exist; ignored"
        for item in ("./hooks.json", "./extra-skills", "./m.json")
    )
    assert (
        read_folder(_codex(tmp_path / "plain", {"name": "plain"}), "cli", env.home).problems == []
    )


def test_an_mcp_file_in_codex_config_spelling_loads_and_an_empty_one_is_named(
    env: Env, tmp_path: Path
) -> None:
    """``{"mcp_servers": {...}}`` — Codex's ``config.toml`` table name, which some published
    Codex plugins write in ``.mcp.json`` — is read like ``mcpServers``; a file that names no
    server at all is named in ``skipped`` instead of being dropped without a word."""
    root = _codex(tmp_path / "cx", {"name": "cx", "mcpServers": "./.mcp.json"})
    remote = {"url": "http://127.0.0.1:9/mcp", "bearer_token_env_var": "CX_TOKEN"}
    (root / ".mcp.json").write_text(json.dumps({"mcp_servers": {"remote": remote}}))
    folder = read_folder(root, "cli", env.home)
    assert sorted(folder.mcp_servers) == ["cx_remote"]
    assert folder.mcp_servers["cx_remote"]["headers"] == {"Authorization": "Bearer ${CX_TOKEN}"}
    (root / ".mcp.json").write_text(json.dumps({"servers": []}))
    folder = read_folder(root, "cli", env.home)
    assert folder.mcp_servers == {}
    assert [s["what"] for s in folder.skipped] == [".mcp.json"]
