"""Which environment variables hold secrets: removed before anything of the workspace's, or a
server mycode starts, sees the environment (``run_command``, language servers...)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

SECRET_ENV = (
    "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*", "*SECRET*", "*TOKEN", "*TOKENS", "*TOKEN_*",
    "AWS_*", "OPENAI_*", "ANTHROPIC_*", "AZURE_*", "MYCODE_HOME", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
    "KEY", "KEY_*", "*_KEY", "*_KEY_[A-Z]*", "PASS", "*_PASS", "AUTH", "*_AUTH", "*AUTH_*", "*_PWD",
    "*_JWT", "*_DSN", "*_CREDENTIAL*", "*CREDS*", "*PRIVATE*", "*PRIVKEY*", "*ACCESSKEY*",
    "*_WEBHOOK*", "*COOKIE*", "*_SK", "*_PAT", "*APITOKEN*", "*_SESSION", "*APIKEY*", "*BEARER*",
)  # fmt: skip
"""Name patterns (case-insensitive) of the variables that are secrets (``DESKTOP_SESSION``, a
desktop's name, is not); a value holding a URL with a password (``postgres://user:pw@host``) or
a ``password=``/``pwd=`` (a URL's query, a connection string's ``;Password=pw``) is one too."""
_SECRET_RE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_ENV))
_SECRET_VALUE = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@|(?:^|[?&;])\s*(?:password|pwd)\s*=\s*[^&;\s]", re.I
)


def is_secret_name(name: str, passthrough: Iterable[str] = (), value: str = "") -> bool:
    """Whether variable ``name`` (set to ``value``) is a secret, unless ``passthrough`` names it."""
    kept = any(fnmatch.fnmatchcase(name, p) for p in (*passthrough, "DESKTOP_SESSION"))
    return not kept and bool(_SECRET_RE.match(name.upper()) or _SECRET_VALUE.search(value))


def scrub_env(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without API keys, tokens, secrets and passwords in URLs (save ``passthrough``)."""
    kept = list(passthrough)
    return {k: v for k, v in env.items() if not is_secret_name(k, kept, v)}
