"""Which workspace files need the user's say: secrets (``.env``, keys), mycode's and git's own
folders, and those of Claude Code's and Codex's hooks (``.claude/``, ``.codex/``). The boundary
itself is the core's (:mod:`mycode_core.paths`)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

_SENSITIVE_NAMES = {
    ".env",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    "credentials",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
}
_SENSITIVE_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx")
_ENV_TEMPLATE = re.compile(r"^\.env\.(example|sample|template|dist|defaults?)$", re.IGNORECASE)


def sensitive_reason(path: Path | str) -> str | None:
    """Why a file looks like it holds secrets (``.env``, private keys), or ``None``."""
    name = PurePosixPath(str(path)).name
    lower = name.lower()
    if _ENV_TEMPLATE.match(name):
        return None
    if lower in _SENSITIVE_NAMES or lower.startswith(".env."):
        return f"{name} usually holds secrets"
    if lower.endswith(_SENSITIVE_SUFFIXES):
        return f"{name} looks like a private key or certificate store"
    return None


CONFIG_FOLDERS = (".claude", ".codex", ".mycode")
"""Folders whose files configure what runs outside the sandbox (hooks, plugin files) — at any
depth: mycode run in a trusted workspace's subfolder reads that subfolder's."""
_PROTECTED = {
    ".git": "repository internals",
    ".mycode": "mycode's own configuration and permissions",
    ".claude": "Claude Code settings: its hooks run outside the sandbox",
    ".codex": "Codex settings: its hooks run outside the sandbox",
}


CONFIG_FILES = {".mcp.json": "it lists MCP servers, which a trusted project starts unsandboxed"}
"""Files that configure what runs outside the sandbox, at any depth (Claude Code counts
``.mcp.json`` among its dangerous files too)."""


def protected_reason(rel: str) -> str | None:
    """Why writing to a workspace-relative path needs the user's say: it is a ``.git`` (file or
    folder: a submodule's or nested repository's too, whose config git runs) or in one, at any
    depth, in one of the :data:`CONFIG_FOLDERS` or one of the :data:`CONFIG_FILES` at any
    depth."""
    parts = PurePosixPath(rel).parts if rel not in ("", ".") else ()
    if parts and parts[-1] in CONFIG_FILES:
        return CONFIG_FILES[parts[-1]]
    found = [0] if parts and parts[0] in _PROTECTED else []
    found += [at for at, part in enumerate(parts) if part == ".git"]
    found += [at for at, part in enumerate(parts[:-1]) if part in CONFIG_FOLDERS]
    found.sort()
    if not found:
        return None
    name = parts[found[0]]
    return f"it is inside {'/'.join(parts[: found[0] + 1])}/ ({_PROTECTED[name]})"
