"""Which environment variables hold secrets: removed before anything of the workspace's, or a
server mycode starts, sees the environment (``run_command``, language servers...)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

SECRET_ENV = (
    "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*", "*SECRET*", "*TOKEN", "*_TOKEN_*", "*APIKEY*",
    "AWS_*", "OPENAI_*", "ANTHROPIC_*", "AZURE_*", "MYCODE_HOME", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
    "KEY", "KEY_*", "*_KEY", "*_KEY_[A-Z]*", "PASS", "*_PASS", "AUTH", "*_AUTH", "*AUTH_*", "*_PWD",
    "*_JWT", "*_DSN", "*_CREDENTIAL*", "*PRIVATE*", "*_WEBHOOK*", "*COOKIE*", "*_SK", "*_PAT",
)  # fmt: skip
"""Name patterns (case-insensitive) of the variables that are secrets; a value holding a URL
with a password (``postgres://user:pw@host``) is one too."""
_SECRET_RE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_ENV))
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@", re.IGNORECASE)


def is_secret_name(name: str, passthrough: Iterable[str] = (), value: str = "") -> bool:
    """Whether variable ``name`` (set to ``value``) is a secret (unless a ``passthrough``
    pattern names it)."""
    kept = any(fnmatch.fnmatchcase(name, p) for p in passthrough)
    return not kept and bool(_SECRET_RE.match(name.upper()) or _URL_PASSWORD.search(value))


def scrub_env(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without API keys, tokens, secrets and URLs with a password (unless named in
    ``passthrough``)."""
    kept = list(passthrough)
    return {k: v for k, v in env.items() if not is_secret_name(k, kept, v)}
