"""A stdio MCP server written by hand, line by line, for what the SDK's own server never sends:
tool schemas as other servers write them (no ``"type"``, ``{}``, a regex of JavaScript's
dialect, an ``outputSchema`` with no ``"type"``, an invalid schema) and a lone UTF-16 surrogate
escaped in JSON. Each tool answers with its name and arguments.

Usage: ``python raw_server.py`` (no ``mcp`` import: it speaks JSON-RPC itself).
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {"name": "no_type", "description": "A schema without a type.",
     "inputSchema": {"properties": {"q": {"type": "string"}}, "required": ["q"]}},
    {"name": "empty", "description": "An empty schema.", "inputSchema": {}},
    {"name": "js_regex", "description": "A pattern of JavaScript's regex dialect.",
     "inputSchema": {"type": "object",
                     "properties": {"word": {"type": "string", "pattern": "^\\p{L}+$"},
                                    "code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}},
    {"name": "output_no_type", "description": "An output schema without a type.",
     "inputSchema": {"type": "object"},
     "outputSchema": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}},
    {"name": "bad_schema", "description": "A schema no JSON Schema validator accepts.",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "no-such-type"}}}},
    {"name": "cut_emoji", "description": "Text cut inside an emoji, as JavaScript's slice cuts.",
     "inputSchema": {"type": "object"}},
    {"name": "list_input", "description": "An input that is not an object.",
     "inputSchema": {"type": "array", "items": {"type": "string"}}},
    {"name": "plain", "description": "An ordinary tool.",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
]  # fmt: skip


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one request (``None`` for a notification)."""
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = f"{params['name']} got {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
        result = {"content": [{"type": "text", "text": text}]}
        if params["name"] == "cut_emoji":  # json.dumps escapes the lone half as "\\ud83d"
            result["content"] = [{"type": "text", "text": "smile \ud83d"}]
        if params["name"] == "output_no_type":
            result["structuredContent"] = {"n": 7}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    """Answer requests from stdin until it closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
