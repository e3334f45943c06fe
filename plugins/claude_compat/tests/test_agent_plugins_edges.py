"""Agent Plugins 1.0.0 folders at the edges of their rules: names that only look valid, JSON
that Python reads but JSON does not allow, a ``MYCODE_HOME`` reached through a symlink, header
fields, a plugin-relative command whose file name holds a space, files in ``skills/`` that are
not skills."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ap_helpers import PLUGIN_SCHEMA, agent_plugin, wrapper_server
from cc_helpers import Env, notices
from mycode_claude_compat.folders import PluginFolder, read_folder
from mycode_claude_compat.placing import name_problems

from mycode_core.testing import run_cli


def _read(root: Path, home: Path) -> PluginFolder:
    return read_folder(root, "cli", home)


def _validate(root: Path, env: Env) -> tuple[int, dict[str, Any] | None]:
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=env.home)
    return out.rc, json.loads(out.stdout) if out.stdout.strip() else None


def test_a_name_ending_in_a_newline_is_invalid(env: Env, tmp_path: Path) -> None:
    """§5.5: ``$`` of a searched pattern matches before a final newline, so ``"evil\\n"``
    passed validate, became an installed folder ``evil\\n`` and tool names."""
    for index, name in enumerate(("evil\n", "a\n", "my-plugin\n", "\nx")):
        root = agent_plugin(tmp_path / f"n{index}", {"$schema": PLUGIN_SCHEMA, "name": name})
        folder = _read(root, env.home)
        assert folder.rejected and folder.fatal[0].section == "5.5", name
    rc, report = _validate(tmp_path / "n0", env)
    assert rc == 1 and report is not None and report["fatal"][0]["section"] == "5.5"
    out = run_cli(["plugins", "install", str(tmp_path / "n0")], cwd=env.workspace, home=env.home)
    assert out.rc == 1
    installed = env.home / "plugins"
    assert not installed.exists() or [p.name for p in installed.iterdir()] in ([], [".staging"])
    assert not (env.home / "plugins.toml").exists()
    # the folder-name rule every format's install goes through says the same
    for name in ("evil\n", "ok\n"):
        folder = PluginFolder(root=tmp_path, name=name, layer="cli")
        assert name_problems(folder), name
    assert name_problems(PluginFolder(root=tmp_path, name="ok", layer="cli")) == []


def test_nan_and_infinity_are_not_json(env: Env, tmp_path: Path) -> None:
    """§5.2 and §7.2.2(2): Python's reader takes ``NaN`` and ``Infinity``; JSON has neither.
    In a place nothing validates (an unimplemented extension namespace, an unknown field) they
    passed; now the manifest is invalid JSON (the plugin rejected), and so is such an
    ``mcp.json`` (MCP off for the plugin, its skills kept)."""
    for index, text in enumerate(
        (
            '{"$schema": "%s", "name": "ok", "extensions": {"com.example": {"v": NaN}}}',
            '{"$schema": "%s", "name": "ok", "later": Infinity}',
            '{"$schema": "%s", "name": "ok", "extensions": {"com.example": {"v": -Infinity}}}',
        )
    ):
        root = agent_plugin(tmp_path / f"p{index}", skills=("one",))
        (root / "plugin.json").write_text(text % PLUGIN_SCHEMA)
        folder = _read(root, env.home)
        assert folder.rejected and folder.skill_dirs == [], text
        assert "not valid JSON" in folder.fatal[0].message and folder.fatal[0].section == "5.2"
    rc, report = _validate(tmp_path / "p0", env)
    assert rc == 1 and report is not None and "NaN" in report["fatal"][0]["message"]
    root = agent_plugin(tmp_path / "m", name="pl", skills=("kept",))
    (root / "mcp.json").write_text(
        '{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": '
        '{"good": {"type": "stdio", "command": "true"}, '
        '"odd": {"type": "stdio", "command": "true", "args": [NaN]}}}'
    )
    folder = _read(root, env.home)
    assert not folder.rejected and folder.skill_names() == ["kept"]
    assert folder.mcp_servers == {}
    assert [s["what"] for s in folder.skipped] == ["mcp.json"]
    assert "not valid JSON" in folder.skipped[0]["reason"]


def test_plugin_data_cwd_with_mycode_home_through_a_symlink(env: Env, tmp_path: Path) -> None:
    """§7.2.1: a ``${PLUGIN_DATA}``-rooted ``cwd`` must stay in the resolved data folder. The
    cwd was resolved and compared with the data folder as written, so with ``MYCODE_HOME``
    reached through a symlink ``${PLUGIN_DATA}`` itself "resolved outside"."""
    linked_home = tmp_path / "home-link"
    linked_home.symlink_to(env.home, target_is_directory=True)
    servers = {
        "data": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_DATA}"},
        "sub": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_DATA}/sub"},
        "root": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_ROOT}"},
        "escape": {"type": "stdio", "command": "true", "cwd": "${PLUGIN_DATA}/../../.."},
    }
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    folder = _read(root, linked_home)
    assert sorted(folder.mcp_servers) == ["pl_data", "pl_root", "pl_sub"], folder.skipped
    data = (env.home / "plugin-data" / "pl").resolve()
    assert folder.mcp_servers["pl_data"]["cwd"] == str(data)
    assert folder.mcp_servers["pl_sub"]["cwd"] == str(data / "sub")
    assert [s["what"] for s in folder.skipped] == ["mcp server escape"]
    out = run_cli(["plugins", "validate", str(root)], cwd=env.workspace, home=linked_home)
    report = json.loads(out.stdout)
    assert out.rc == 0 and [w["message"] for w in report["warnings"]] == [
        f"server 'escape' skipped: 'cwd' '${{PLUGIN_DATA}}/../../..' resolves outside "
        f"{linked_home / 'plugin-data' / 'pl'}"
    ]


def _remote_with(headers: dict[str, str]) -> dict[str, Any]:
    return {"type": "streamable-http", "url": "https://a.example/mcp", "headers": headers}


def test_header_fields_must_be_valid(env: Env, tmp_path: Path) -> None:
    """§7.2.1: header names and values MUST be valid HTTP header fields (§7.2.2(3): else the
    server is skipped). Only CR, LF and NUL were refused: ``\\x01`` and ``\\x7f`` were sent."""
    values = ("a\x01b", "ab\x7f", "\x1b[31m", "a\rb", " a", "a\t", "caf\u00e9")
    cases = zip(("ctl", "del", "esc", "cr", "lead", "trail", "utf"), values, strict=True)
    bad = {case: {"X-A": value} for case, value in cases}
    bad |= {"name_nl": {"X-A\n": "1"}, "name_ctl": {"X-\x01": "1"}}
    good = {"ok": {"X-A": "a b\tc", "X-Empty": "", "X-Sym": "!#$%&'*+-.^_`|~()<>@,;:\\\"/[]?={}"}}
    servers = {n: _remote_with(h) for n, h in {**bad, **good}.items()}
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    folder = _read(root, env.home)
    assert sorted(folder.mcp_servers) == ["pl_ok"]
    assert folder.mcp_servers["pl_ok"]["headers"] == good["ok"]
    reasons = {s["what"]: s["reason"] for s in folder.skipped}
    assert sorted(reasons) == sorted(f"mcp server {n}" for n in bad)
    assert "control character ('\\x01')" in reasons["mcp server ctl"]
    assert "control character ('\\x7f')" in reasons["mcp server del"]
    assert "non-ASCII" in reasons["mcp server utf"] and "start or end" in reasons["mcp server lead"]
    assert "not a valid HTTP header name" in reasons["mcp server name_nl"]
    rc, report = _validate(root, env)
    assert rc == 0 and report is not None
    assert sum("skipped" in w["message"] for w in report["warnings"]) == len(bad)


def test_headers_the_client_sets_are_dropped(env: Env, tmp_path: Path) -> None:
    """§7.2.1: headers the client generates for HTTP and MCP take precedence over configured
    ones of the same case-insensitive name; a configured ``host`` or ``Transfer-Encoding``
    was sent and broke the connection. They are dropped, each with a warning; the others
    (``Authorization`` too: mycode sets none) are sent as written."""
    owned = {
        "host": "evil.example",
        "Transfer-Encoding": "chunked",
        "Content-Length": "0",
        "CONNECTION": "close",
        "Mcp-Session-Id": "s",
        "MCP-Protocol-Version": "1999-01-01",
        "Accept": "text/html",
        "content-type": "text/plain",
    }
    kept = {"X-Tenant": "public", "Authorization": "Bearer public-token"}
    servers = {"h": _remote_with({**owned, **kept}), "s": {**_remote_with(owned), "type": "sse"}}
    root = agent_plugin(tmp_path / "p", name="pl", mcp=servers)
    folder = _read(root, env.home)
    assert folder.mcp_servers["pl_h"]["headers"] == kept
    assert folder.mcp_servers["pl_s"]["headers"] == {}
    dropped = [w.message for w in folder.warnings if "dropped" in w.message]
    assert len(dropped) == 2 * len(owned) and all("7.2.1" == w.section for w in folder.warnings)
    assert "server 'h': header 'host' dropped" in dropped[0]
    rc, report = _validate(root, env)
    assert rc == 0 and report is not None and report["fatal"] == []
    assert sum("dropped" in w["message"] for w in report["warnings"]) == 2 * len(owned)


def test_a_plugin_command_whose_file_name_holds_a_space(env: Env, tmp_path: Path) -> None:
    """§7.2.1: ``command`` is one executable token, not a shell string; ``./bin/my server``
    naming a file of the plugin is one token (it was refused), ``npx foo`` or a ``./`` path
    with arguments after it still are not."""
    root = tmp_path / "spaced plugin"
    root.mkdir()
    entry = wrapper_server(root)
    (root / "bin" / "server").rename(root / "bin" / "my server")
    servers = {
        "time": {**entry, "command": "./bin/my server"},
        "shell": {"type": "stdio", "command": "npx foo"},
        "with_args": {"type": "stdio", "command": "./bin/my server --port 1"},
        "missing": {"type": "stdio", "command": "./bin/no such"},
        "folder": {"type": "stdio", "command": "./bin "},
    }
    agent_plugin(root, name="spaced", mcp=servers)
    folder = _read(root, env.home)
    assert sorted(folder.mcp_servers) == ["spaced_time"], folder.skipped
    assert folder.mcp_servers["spaced_time"]["command"] == str(root.resolve() / "bin" / "my server")
    reasons = {s["what"]: s["reason"] for s in folder.skipped}
    assert all("one executable token" in reasons[f"mcp server {n}"] for n in servers if n != "time")
    result = env.run([{"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__spaced_time__") for t in tools), (tools, notices(result))


def _listed(root: Path, env: Env, name: str) -> tuple[list[str], list[str], dict[str, Any]]:
    """``(skills a run lists, their problems, the folder's row in mycode plugins)``."""
    out = run_cli(["skills", "--json", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    data = json.loads(out.stdout)
    out = run_cli(["plugins", "--plugin-dir", str(root)], cwd=env.workspace, home=env.home)
    [row] = [r for r in json.loads(out.stdout) if r["name"] == name]
    return sorted(s["name"] for s in data["skills"]), data["problems"], row


def test_skills_of_an_agent_plugins_folder_are_its_skills_folders(env: Env, tmp_path: Path) -> None:
    """§6.1/§7.1: each immediate folder of ``skills/`` holding a file named exactly
    ``SKILL.md`` is one skill. ``skills/SKILL.md`` hid every real skill (the folder itself
    was listed as the skill ``skills``); a lowercase ``skill.md`` was loaded by ``mycode
    skills`` but left out of ``contributes``; ``skills/.hidden/SKILL.md`` was skipped without
    a word. Now a run, ``mycode plugins`` and ``validate`` agree, and say why."""
    root = agent_plugin(tmp_path / "p", name="pl", skills=("good",))
    skills = root / "skills"
    (skills / "SKILL.md").write_text("---\nname: skills\ndescription: d\n---\nx\n")
    (skills / "lower").mkdir()
    (skills / "lower" / "skill.md").write_text("---\nname: lower\ndescription: d\n---\nx\n")
    (skills / ".hidden").mkdir()
    (skills / ".hidden" / "SKILL.md").write_text("---\nname: hidden\ndescription: d\n---\nx\n")
    names, problems, row = _listed(root, env, "pl")
    assert names == ["good"] and row["contributes"]["skills"] == ["good"]
    assert any("skills/SKILL.md is not a skill" in p for p in problems)
    assert any("lower not loaded" in p and "SKILL.md" in p for p in problems)
    assert any("skills/.hidden) not loaded" in p for p in problems)
    assert [item["what"] for item in row["skipped"]] == ["skill skills/.hidden"]
    rc, report = _validate(root, env)
    assert rc == 0 and report is not None
    warned = [w["message"] for w in report["warnings"] if w["section"] == "7.1"]
    assert len(warned) == 3, warned
    assert any("skills/SKILL.md is not a skill" in w for w in warned)
    # a Claude Code folder keeps its own reading: skills/SKILL.md makes skills/ one skill
    (root / "plugin.json").unlink()
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "cc"}')
    names, _, row = _listed(root, env, "cc")
    assert names == row["contributes"]["skills"] == ["skills"]
    # and without it, what a run loads (skill.md too, no hidden folder) is what it contributes
    (skills / "SKILL.md").unlink()
    names, problems, row = _listed(root, env, "cc")
    assert names == row["contributes"]["skills"] == ["good", "lower"], problems
