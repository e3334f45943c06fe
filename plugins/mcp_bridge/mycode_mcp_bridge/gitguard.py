"""Keep a workspace's git configuration from running programs through an MCP server.

A stdio server that runs git in the workspace (``mcp-server-git``'s ``git_status``, which is
read-only and so runs unasked) would run whatever the repository's ``.git/config`` names:
``core.fsmonitor``, diff ``textconv`` drivers, ``filter`` drivers, a pager... In a workspace
the user has not trusted, that is code chosen by the repository (SPEC §8), so such servers
get the same overrides mycode's own git commands use (:mod:`mycode_core.safegit`), passed as
``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``: git reads those after
every configuration file, so they win over the repository's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from mycode_core import safegit


def git_env(workspace: Path, env: Mapping[str, str]) -> dict[str, str]:
    """The variables to add to a server's environment ``env`` (its own ``GIT_CONFIG_*``
    entries are kept, ours come after them and so win)."""
    try:
        repo = safegit.find_repository(workspace, contain=True)
        overrides = safegit.config_overrides(repo)
    except safegit.SafeGitError:
        # .git (or its commondir) leads outside the workspace, or its config includes other
        # files: no git command a server runs may use this repository at all
        return {"GIT_DIR": str(workspace / ".git-refused-by-mycode")}
    try:
        first = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        first = 0
    out: dict[str, str] = {}
    pairs = [item.partition("=") for item in overrides[1::2]]
    # an external diff program (``diff.external``, ``diff.<driver>.command``) replaces git's
    # own diff: overridden only where the repository names one, and by ``true`` (no lines)
    named = _keys_named(repo)
    pairs = [
        (key, sep, "true" if key == "diff.external" else value)
        for key, sep, value in pairs
        if not _is_diff_program(key) or key.rpartition(".")[2].lower() in named
    ]
    for index, (key, _, value) in enumerate(pairs, start=first):
        out[f"GIT_CONFIG_KEY_{index}"] = key
        out[f"GIT_CONFIG_VALUE_{index}"] = value
    out["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return out


_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)", re.MULTILINE)


def _is_diff_program(key: str) -> bool:
    return key == "diff.external" or (key.startswith("diff.") and key.endswith(".command"))


def _keys_named(repo: safegit.Repository | None) -> set[str]:
    """Every key name (lower case, without its section) in the repository's configuration
    files: a name set in another section only costs a needless override."""
    names: set[str] = set()
    if repo is None:
        return names
    for path in (repo.common_dir / "config", repo.git_dir / "config.worktree"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        names |= {match.lower() for match in _KEY.findall(text)}
    return names
