"""Building folder plugins of the three formats for the tests (our own folders, no copies)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")


def skill(folder: Path, name: str, description: str = "a test skill") -> Path:
    """``folder/<name>/SKILL.md`` with valid front matter."""
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n")
    return path


def agent_plugin(
    root: Path,
    manifest: dict[str, Any] | None = None,
    *,
    name: str = "demo-plugin",
    skills: tuple[str, ...] = (),
    mcp: dict[str, Any] | None = None,
    mcp_schema: str = MCP_SCHEMA,
) -> Path:
    """An Agent Plugins folder: ``plugin.json`` (``manifest`` replaces the default one),
    ``skills/<name>/SKILL.md`` and ``mcp.json`` (``{"mcpServers": mcp}``)."""
    root.mkdir(parents=True, exist_ok=True)
    data = manifest if manifest is not None else {"$schema": PLUGIN_SCHEMA, "name": name}
    (root / "plugin.json").write_text(json.dumps(data))
    for item in skills:
        skill(root / "skills", item)
    if mcp is not None:
        (root / "mcp.json").write_text(json.dumps({"$schema": mcp_schema, "mcpServers": mcp}))
    return root


def wrapper_server(root: Path, record: str = "${PLUGIN_DATA}/seen.json") -> dict[str, Any]:
    """``bin/server`` in ``root``: records its cwd, argv and environment to the file named by
    its first argument, then becomes the real MCP time server. Returns the stdio entry."""
    script = root / "bin" / "server"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "out = sys.argv[1]\n"
        "os.makedirs(os.path.dirname(out), exist_ok=True)\n"
        "json.dump({'cwd': os.getcwd(), 'argv': sys.argv[1:], 'env': dict(os.environ)},"
        " open(out, 'w'))\n"
        f"os.execv({str(TIME_SERVER)!r}, [{str(TIME_SERVER)!r}, '--local-timezone', 'UTC'])\n"
    )
    script.chmod(0o755)
    return {"type": "stdio", "command": "./bin/server", "args": [record]}


def git(cwd: Path, *args: str) -> str:
    """Run git in a test repository (plain git: the repository is ours)."""
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str = "c") -> str:
    """Commit everything in ``repo`` (initialised if needed); returns the commit."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")
