"""Codex's MCP server fields, as the MCP bridge reads a server entry.

A Codex plugin's ``.mcp.json`` may use the keys of Codex's own ``[mcp_servers.NAME]`` table:
``bearer_token_env_var`` (the ``Authorization: Bearer`` token from that environment variable),
``http_headers`` (literal headers), ``env_http_headers`` (header → environment variable),
``env_vars`` (environment variables passed to a stdio server), ``startup_timeout_sec``,
``tool_timeout_sec`` and ``enabled``. They become ``headers``, ``env``, ``startup_timeout``,
``timeout`` and ``disabled``; values taken from the environment are written ``${VAR}``, which
the bridge expands when it starts the server (and names when unset). ``enabled_tools`` and
``disabled_tools`` are kept as they are: the bridge reads them itself.
"""

from __future__ import annotations

import os
from typing import Any


def bridge_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with Codex's keys translated (the other keys are kept as they are)."""
    out = dict(entry)
    headers = dict(out.get("headers") or {}) if isinstance(out.get("headers"), dict) else {}
    literal = out.pop("http_headers", None)
    if isinstance(literal, dict):
        headers.update({str(k): str(v) for k, v in literal.items()})
    from_env = out.pop("env_http_headers", None)
    if isinstance(from_env, dict):
        headers.update({str(k): f"${{{v}}}" for k, v in from_env.items() if isinstance(v, str)})
    token = out.pop("bearer_token_env_var", None)
    if isinstance(token, str) and token.strip():
        headers.setdefault("Authorization", f"Bearer ${{{token.strip()}}}")
    if headers:
        out["headers"] = headers
    passed = out.pop("env_vars", None)
    if isinstance(passed, list):
        env = dict(out.get("env") or {}) if isinstance(out.get("env"), dict) else {}
        for name in passed:
            if isinstance(name, str) and name in os.environ:
                env.setdefault(name, f"${{{name}}}")
        out["env"] = env
    for codex_key, key in (
        ("startup_timeout_sec", "startup_timeout"),
        ("tool_timeout_sec", "timeout"),
    ):
        if codex_key in out:
            out.setdefault(key, out.pop(codex_key))
    if out.pop("enabled", True) is False:
        out["disabled"] = True
    return out
