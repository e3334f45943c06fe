"""``mycode plugins install/uninstall/update/trust`` (SPEC §11): folders, local git
repositories (``#REV``), git URLs, marketplaces, Python distributions; nothing half-installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ap_helpers import PLUGIN_SCHEMA, agent_plugin, commit_all, git, skill, wrapper_server
from cc_helpers import Env, bash, notices
from market_helpers import cli, registry

from mycode_core.testing import run_cli


def _left_over(env: Env) -> list[str]:
    staging = env.home / "plugins" / ".staging"
    return os.listdir(staging) if staging.exists() else []


def test_install_a_folder_then_it_loads_everywhere(env: Env, tmp_path: Path) -> None:
    source = agent_plugin(tmp_path / "src", name="helper", skills=("tidy",))
    out = cli(env, "install", str(source))
    assert out.rc == 0, out.stderr
    assert (env.home / "plugins" / "helper" / "skills" / "tidy" / "SKILL.md").is_file()
    record = registry(env)["helper"]
    assert record["format"] == "agent-plugins" and record["source"] == str(source.resolve())
    assert record["hash"].startswith("sha256:") and "rev" not in record
    other = tmp_path / "elsewhere"
    other.mkdir()
    listing = run_cli(["skills", "--json"], cwd=other, home=env.home)
    skills = {s["name"]: s for s in json.loads(listing.stdout)["skills"]}
    assert skills["tidy"]["plugin"] == "helper"
    rows = [r for r in json.loads(cli(env).stdout) if r.get("format")]
    assert rows[0]["source"] == "installed" and rows[0]["name"] == "helper"
    again = cli(env, "install", str(source))
    assert again.rc == 1 and "already installed" in again.stderr
    assert _left_over(env) == []


def test_invalid_plugin_is_refused_with_the_report_and_nothing_left(
    env: Env, tmp_path: Path
) -> None:
    source = agent_plugin(tmp_path / "src", {"$schema": PLUGIN_SCHEMA, "name": "a--b"})
    out = cli(env, "install", str(source))
    assert out.rc == 1 and "Traceback" not in out.stderr
    report = json.loads(out.stderr[: out.stderr.rindex("}") + 1])
    assert report["fatal"][0]["section"] == "5.5"
    assert not (env.home / "plugins.toml").exists()
    assert [p for p in os.listdir(env.home / "plugins") if not p.startswith(".")] == []
    assert _left_over(env) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    out = cli(env, "install", str(empty))
    assert out.rc == 1 and "holds no plugin" in out.stderr
    assert cli(env, "install").rc == 2


def test_validate_refuses_a_name_install_refuses(env: Env, tmp_path: Path) -> None:
    """A Claude Code manifest whose name cannot be a folder ("My Tools") installs nowhere, so
    ``validate`` says so too, instead of an empty ``fatal`` that ``install`` then contradicts."""
    source = tmp_path / "tools"
    (source / ".claude-plugin").mkdir(parents=True)
    (source / ".claude-plugin" / "plugin.json").write_text('{"name": "My Tools"}')
    out = cli(env, "validate", str(source))
    assert out.rc == 1
    [fatal] = json.loads(out.stdout)["fatal"]
    assert "'My Tools'" in fatal["message"] and fatal["section"] == "claude-code"
    assert cli(env, "install", str(source)).rc == 1


def test_local_git_repository_with_a_pinned_revision(env: Env, tmp_path: Path) -> None:
    repo = agent_plugin(tmp_path / "repo", name="pinned", skills=("one",))
    first = commit_all(repo, "one")
    skill(repo / "skills", "two")
    commit_all(repo, "two")
    out = cli(env, "install", f"{repo}#{first}")
    assert out.rc == 0, out.stderr
    installed = env.home / "plugins" / "pinned"
    assert sorted(os.listdir(installed / "skills")) == ["one"]
    assert not (installed / ".git").exists()
    record = registry(env)["pinned"]
    assert record["rev"] == first and record["pinned"] is True
    bad = cli(env, "install", f"{repo}#0000000000000000000000000000000000000000")
    assert bad.rc == 1 and _left_over(env) == []


def test_a_cloned_repository_runs_none_of_its_git_config(env: Env, tmp_path: Path) -> None:
    repo = agent_plugin(tmp_path / "repo", name="hostile", skills=("one",))
    marker = tmp_path / "ran"
    (repo / ".gitattributes").write_text("* filter=evil\n")
    commit_all(repo)
    git(repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    out = cli(env, "install", f"file://{repo}")
    assert out.rc == 0, out.stderr
    assert not marker.exists()
    assert registry(env)["hostile"]["rev"] == git(repo, "rev-parse", "HEAD")


def test_a_git_url_that_does_not_resolve(env: Env, tmp_path: Path) -> None:
    out = cli(env, "install", f"file://{tmp_path}/no-such-repo.git")
    assert out.rc == 1 and "cannot fetch" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert _left_over(env) == []


def _marketplace(root: Path, where: str, entries: list[dict[str, Any]]) -> Path:
    path = root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "team", "owner": {"name": "t"}, "plugins": entries}))
    return root


def test_marketplace_install_from_a_folder_and_from_a_git_repo(env: Env, tmp_path: Path) -> None:
    market = tmp_path / "market"
    agent_plugin(market / "plugins" / "fmt", name="fmt", skills=("format-code",))
    (market / "plugins" / "cc" / ".claude-plugin").mkdir(parents=True)
    (market / "plugins" / "cc" / ".claude-plugin" / "plugin.json").write_text('{"name": "cc"}')
    _marketplace(
        market,
        ".claude-plugin/marketplace.json",
        [{"name": "fmt", "source": "./plugins/fmt"}, {"name": "cc", "source": "./plugins/cc"}],
    )
    out = cli(env, "install", f"fmt@{market}")
    assert out.rc == 0, out.stderr
    assert registry(env)["fmt"]["marketplace"] == str(market.resolve())
    missing = cli(env, "install", f"nope@{market}")
    assert missing.rc == 1 and "no plugin named 'nope'" in missing.stderr
    assert "cc" in missing.stderr and _left_over(env) == []

    codex_market = tmp_path / "cxm"
    agent_plugin(codex_market / "p" / "lint", name="lint")
    _marketplace(
        codex_market,
        ".agents/plugins/marketplace.json",
        [{"name": "lint", "source": {"source": "local", "path": "./p/lint"}}],
    )
    commit_all(codex_market)
    out = cli(env, "install", f"lint@file://{codex_market}")
    assert out.rc == 0, out.stderr
    assert (env.home / "plugins" / "lint" / "plugin.json").is_file()
    assert registry(env)["lint"]["subdir"] == "p/lint"
    same = cli(env, "update", "lint", "--yes")
    assert same.rc == 0 and "up to date" in same.stdout, same.stderr
    skill(codex_market / "p" / "lint" / "skills", "newer")
    commit_all(codex_market)
    newer = cli(env, "update", "lint", "--yes")
    assert newer.rc == 0 and "updated" in newer.stdout, newer.stderr
    assert (env.home / "plugins" / "lint" / "skills" / "newer" / "SKILL.md").is_file()
    assert cli(env, "install", f"lint@{tmp_path}/nowhere").rc == 1


def test_marketplace_entries_in_a_folder_of_another_repository(env: Env, tmp_path: Path) -> None:
    """Claude Code's ``git-subdir`` (and ``url`` with ``path``) sources: the plugin is one
    folder of another git repository, at the pinned ``sha``."""
    repo = tmp_path / "plugins-repo"
    (repo / "plugins" / "alpha" / ".claude-plugin").mkdir(parents=True)
    (repo / "plugins" / "alpha" / ".claude-plugin" / "plugin.json").write_text('{"name": "alpha"}')
    skill(repo / "plugins" / "alpha" / "skills", "first")
    (repo / "README.md").write_text("not a plugin at the root\n")
    pinned = commit_all(repo)
    skill(repo / "plugins" / "alpha" / "skills", "second")
    commit_all(repo)
    market = tmp_path / "market"
    url = f"file://{repo}"
    _marketplace(
        market,
        ".claude-plugin/marketplace.json",
        [
            {
                "name": "alpha",
                "source": {"source": "git-subdir", "url": url, "path": "plugins/alpha"}
                | {"ref": "main", "sha": pinned},
            },
            {"name": "beta", "source": {"source": "url", "url": url, "path": "plugins/none"}},
        ],
    )
    out = cli(env, "install", f"alpha@{market}")
    assert out.rc == 0, out.stderr
    installed = env.home / "plugins" / "alpha"
    assert (installed / "skills" / "first" / "SKILL.md").is_file()
    assert not (installed / "skills" / "second").exists()  # the sha, not the branch's head
    record = registry(env)["alpha"]
    assert record["subdir"] == "plugins/alpha" and record["source"] == url
    assert record["rev"] == pinned and record["pinned"] is True
    same = cli(env, "update", "alpha", "--yes")
    assert same.rc == 0 and "up to date" in same.stdout, same.stderr
    missing = cli(env, "install", f"beta@{market}")
    assert missing.rc == 1 and "plugins/none" in missing.stderr and _left_over(env) == []


def test_a_strict_false_entry_is_the_manifest_of_a_folder_without_one(
    env: Env, tmp_path: Path
) -> None:
    """As the official marketplace ships skill collections: the entry names the skills of a
    folder that has no ``plugin.json`` of its own."""
    repo = tmp_path / "skills-repo"
    skill(repo / "skills", "tune-kernels")
    skill(repo / "skills", "serve-models")
    skill(repo / "skills", "left-out")
    commit_all(repo)
    market = tmp_path / "market"
    entry = {
        "name": "gpu-skills",
        "description": "GPU work",
        "strict": False,
        "skills": ["./tune-kernels", "./serve-models"],
        "source": {"source": "git-subdir", "url": f"file://{repo}", "path": "skills"},
    }
    _marketplace(market, ".claude-plugin/marketplace.json", [entry])
    out = cli(env, "install", f"gpu-skills@{market}")
    assert out.rc == 0, out.stderr
    listed = run_cli(["skills", "--json"], cwd=env.workspace, home=env.home)
    rows = json.loads(listed.stdout)["skills"]
    assert sorted((r["name"], r["plugin"]) for r in rows) == [
        ("serve-models", "gpu-skills"),
        ("tune-kernels", "gpu-skills"),
    ]
    again = cli(env, "update", "gpu-skills", "--yes")
    assert again.rc == 0 and "up to date" in again.stdout, again.stderr


def test_uninstall_removes_the_folder_record_and_data(env: Env, tmp_path: Path) -> None:
    source = agent_plugin(tmp_path / "src", name="gone", skills=("x",))
    assert cli(env, "install", str(source)).rc == 0
    (env.home / "plugin-data" / "gone" / "state").write_text("1")
    out = cli(env, "uninstall", "gone")
    assert out.rc == 0, out.stderr
    assert not (env.home / "plugins" / "gone").exists()
    assert not (env.home / "plugin-data" / "gone").exists()
    assert "gone" not in tomllib.loads((env.home / "plugins.toml").read_text()).get("plugins", {})
    again = cli(env, "uninstall", "gone")
    assert again.rc == 1 and "no installed plugin" in again.stderr


def _server_plugin(root: Path, env: Env) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    agent_plugin(root, name="srv", mcp={"time": wrapper_server(root)})
    return root


def test_update_shows_the_hash_change_and_keeps_plugin_data(env: Env, tmp_path: Path) -> None:
    source = _server_plugin(tmp_path / "src", env)
    assert cli(env, "install", str(source)).rc == 0
    data = env.home / "plugin-data" / "srv"
    (data / "keep.txt").write_text("state")
    old = registry(env)["srv"]["hash"]
    same = cli(env, "update", "srv", "--yes")
    assert same.rc == 0 and "up to date" in same.stdout
    skill(source / "skills", "new-skill")
    asked = cli(env, "update", "srv")  # not a terminal, no --yes: not updated
    assert asked.rc == 1 and old in asked.stdout and "--yes" in asked.stderr
    assert not (env.home / "plugins" / "srv" / "skills").exists()
    out = cli(env, "update", "--yes")
    assert out.rc == 0, out.stderr
    new = registry(env)["srv"]["hash"]
    assert new != old and f"{old} -> {new}" in out.stdout
    assert (env.home / "plugins" / "srv" / "skills" / "new-skill" / "SKILL.md").is_file()
    assert (data / "keep.txt").read_text() == "state"
    assert _left_over(env) == []


def test_changed_files_run_no_code_until_trusted(env: Env, tmp_path: Path) -> None:
    source = _server_plugin(tmp_path / "src", env)
    assert cli(env, "install", str(source)).rc == 0
    result = env.run([{"content": "ok"}])
    tools = result.of_type("system")[0]["tools"]
    assert any(t.startswith("mcp__srv_time__") for t in tools), notices(result)
    installed = env.home / "plugins" / "srv"
    (installed / "bin" / "server").write_text((installed / "bin" / "server").read_text() + "\n#x\n")
    seen = env.home / "plugin-data" / "srv" / "seen.json"
    seen.unlink()
    result = env.run([{"content": "ok"}])
    tools = result.of_type("system")[0]["tools"]
    assert not any(t.startswith("mcp__srv_") for t in tools)
    assert not seen.exists()
    assert len([n for n in notices(result) if "plugins trust srv" in n]) == 1
    listing = [r for r in json.loads(cli(env).stdout) if r.get("name") == "srv"]
    assert "changed since install" in listing[0]["skipped"][0]["reason"]
    out = cli(env, "trust", "srv")
    assert out.rc == 0, out.stderr
    result = env.run([{"content": "ok"}])
    assert any(t.startswith("mcp__srv_time__") for t in result.of_type("system")[0]["tools"])
    assert cli(env, "trust", "nobody").rc == 1


def test_changed_hooks_do_not_run(env: Env, tmp_path: Path) -> None:
    source = tmp_path / "cc"
    (source / ".claude-plugin").mkdir(parents=True)
    (source / ".claude-plugin" / "plugin.json").write_text('{"name": "guard"}')
    (source / "hooks").mkdir()
    hook = {"type": "command", "command": env.hook("guard")}
    (source / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    assert cli(env, "install", str(source)).rc == 0
    env.run([bash("echo 1"), {"content": "ok"}])
    assert len(env.log("guard")) == 1
    (env.home / "plugins" / "guard" / "extra.txt").write_text("new")
    env.run([bash("echo 1"), {"content": "ok"}])
    assert len(env.log("guard")) == 1


def test_python_distribution_errors_are_one_line(env: Env, tmp_path: Path) -> None:
    out = cli(env, "install", str(tmp_path / "missing-1.0-py3-none-any.whl"))
    assert out.rc == 1 and "does not exist" in out.stderr and "Traceback" not in out.stderr
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project\nbroken")
    out = cli(env, "install", str(project))
    assert out.rc == 1 and "cannot install" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_python_distribution_installs_into_mycodes_interpreter(env: Env, tmp_path: Path) -> None:
    """A real local project into a throwaway copy of the interpreter's environment would be
    slow; instead the project is installed into this very interpreter and removed again."""
    project = tmp_path / "proj"
    package = project / "f19_probe_plugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "f19-probe-plugin"\nversion = "0.1.0"\n'
        '[project.entry-points.mycode]\nf19_probe = "f19_probe_plugin"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    uv = shutil.which("uv")
    has_pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if uv is None and has_pip.returncode != 0:
        pytest.skip("neither uv on PATH nor pip in this interpreter")
    out = cli(env, "install", str(project))
    try:
        assert out.rc == 0, out.stderr
        assert "plugins --check passed" in out.stdout
        assert registry(env)["f19-probe-plugin"]["kind"] == "python"
        listing = json.loads(cli(env).stdout)
        assert any(r.get("distribution") == "f19-probe-plugin" for r in listing)
    finally:
        removed = cli(env, "uninstall", "f19-probe-plugin")
    assert removed.rc == 0, removed.stderr
    check = subprocess.run([sys.executable, "-c", "import f19_probe_plugin"], capture_output=True)
    assert check.returncode != 0


def test_changed_files_take_back_a_commands_allowed_tools(env: Env, tmp_path: Path) -> None:
    source = tmp_path / "kit"
    (source / ".claude-plugin").mkdir(parents=True)
    (source / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}')
    (source / "commands").mkdir()
    (source / "commands" / "stage.md").write_text(
        "---\nallowed-tools: Bash(git add:*)\n---\nStage notes.txt.\n"
    )
    assert cli(env, "install", str(source)).rc == 0
    subprocess.run(["git", "init", "-q", str(env.workspace)], check=True)
    (env.workspace / "notes.txt").write_text("n\n")

    def decisions() -> list[str]:
        turns = [bash("git add notes.txt"), {"content": "ok"}]
        # env.run bypasses permissions; the grant matters in the default mode
        result = env.run(turns, "--permission-mode", "default", prompt="/stage")
        return [e["decision"] for e in result.of_type("permission")]

    assert decisions() == ["allow"]
    (env.home / "plugins" / "kit" / "commands" / "stage.md").write_text(
        "---\nallowed-tools: Bash\n---\nStage notes.txt.\n"
    )
    assert decisions() == ["deny"]
    assert cli(env, "trust", "kit").rc == 0
    assert decisions() == ["allow"]


def test_a_marketplace_added_by_its_name(env: Env, tmp_path: Path) -> None:
    """``plugins marketplace add SOURCE`` records the marketplace by its own name, so
    ``PLUGIN@team`` installs from it, as Claude Code's ``/plugin marketplace add`` does."""
    market = tmp_path / "market"
    agent_plugin(market / "plugins" / "fmt", name="fmt", skills=("format-code",))
    _marketplace(market, ".claude-plugin/marketplace.json",
                 [{"name": "fmt", "source": "./plugins/fmt"}])  # fmt: skip
    commit_all(market)
    added = cli(env, "marketplace", "add", f"file://{market}")
    assert added.rc == 0, added.stderr
    assert "added marketplace team (1 plugins)" in added.stdout
    listed = cli(env, "marketplace", "list")
    assert f"team  file://{market}" in listed.stdout
    assert "claude-plugins-official  https://github.com/anthropics/" in listed.stdout
    out = cli(env, "install", "fmt@team")
    assert out.rc == 0, out.stderr
    assert (env.home / "plugins" / "fmt" / "plugin.json").is_file()
    assert cli(env, "marketplace", "remove", "team").rc == 0
    gone = cli(env, "marketplace", "remove", "team")
    assert gone.rc == 1 and "no marketplace named 'team'" in gone.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = cli(env, "marketplace", "add", str(empty))
    assert refused.rc == 1 and "no marketplace there" in refused.stderr


def test_marketplace_names_resolve_to_their_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mycode_claude_compat.marketplaces import record, resolve

    assert resolve("claude-plugins-official", tmp_path).endswith(
        "github.com/anthropics/claude-plugins-official.git"
    )
    assert resolve("anthropics/claude-code#v2", tmp_path) == (
        "https://github.com/anthropics/claude-code.git#v2"
    )
    record(tmp_path, "claude-plugins-official", "/my/mirror")
    assert resolve("claude-plugins-official", tmp_path) == "/my/mirror"  # yours wins
    local = tmp_path / "owner" / "repo"
    local.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert resolve("owner/repo", tmp_path) == "owner/repo"  # a path that exists is itself


def test_plugins_help_lists_the_verbs_plugins_add(env: Env) -> None:
    """``mycode plugins --help`` names install, update... though they come from a plugin."""
    done = cli(env, "--help")
    assert done.rc == 0, done.stderr
    listed = done.stdout.split("Commands:", 1)[-1]
    for verb in ("install", "marketplace", "trust", "uninstall", "update", "validate"):
        assert f"  {verb} " in listed, done.stdout
