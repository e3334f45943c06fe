"""Which environment variables hold secrets: removed before anything of the workspace's, or a
server mycode starts, sees the environment (``run_command``, language servers...)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

SECRET_ENV = (
    "*_API_KEY", "*_APIKEY", "*_TOKEN", "*_SECRET", "*_SECRET_*", "*_PASSWORD", "*_PASSWD",
    "*_CREDENTIALS", "*_ACCESS_KEY", "*_PRIVATE_KEY", "AWS_*", "OPENAI_*", "ANTHROPIC_*",
    "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "GITHUB_TOKEN", "GH_TOKEN", "MYCODE_API_KEY",
    "MYCODE_HOME", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "NPM_CONFIG__AUTH*", "HF_TOKEN",
)  # fmt: skip
"""Name patterns (case-insensitive) of the variables that are secrets."""
_SECRET_RE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_ENV))


def is_secret_name(name: str, passthrough: Iterable[str] = ()) -> bool:
    """Whether variable ``name`` is a secret (unless a ``passthrough`` pattern names it)."""
    if any(fnmatch.fnmatchcase(name, p) for p in passthrough):
        return False
    return _SECRET_RE.match(name.upper()) is not None


def scrub_env(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without API keys, tokens and secrets (unless named in ``passthrough``)."""
    kept = list(passthrough)
    return {k: v for k, v in env.items() if not is_secret_name(k, kept)}
