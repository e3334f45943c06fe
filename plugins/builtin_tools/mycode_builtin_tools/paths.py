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


_PROTECTED = {
    ".git": "repository internals",
    ".mycode": "mycode's own configuration and permissions",
    ".claude": "Claude Code settings: its hooks run outside the sandbox",
    ".codex": "Codex settings: its hooks run outside the sandbox",
}


def protected_reason(rel: str) -> str | None:
    """Why writing to a workspace-relative path needs the user's say (``.git/``, ``.mycode/``,
    ``.claude/``, ``.codex/``)."""
    first = PurePosixPath(rel).parts[0] if rel not in ("", ".") else ""
    what = _PROTECTED.get(first)
    return f"it is inside {first}/ ({what})" if what else None
