"""A stdio MCP server written by hand, line by line, for what the SDK's own server never sends:
tool schemas as other servers write them (no ``"type"``, ``{}``, a regex of JavaScript's
dialect, an ``outputSchema`` with no ``"type"``, an invalid schema) and a lone UTF-16 surrogate
escaped in JSON. Each tool answers with its name and arguments.

Usage: ``python raw_server.py`` (no ``mcp`` import: it speaks JSON-RPC itself).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
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


Call = Callable[[dict[str, Any]], dict[str, Any]]
"""``call(params)`` → the result of a ``tools/call`` request."""


def answer(
    message: dict[str, Any],
    name: str,
    tools: list[dict[str, Any]],
    call: Call,
    client: dict[str, Any],
) -> dict[str, Any] | None:
    """The response to one request (``None`` for a notification); ``client`` keeps the
    client's ``initialize`` params."""
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message or method is None:
        return None
    if method == "initialize":
        client.update(params)
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        result = call(params)
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve(name: str, tools: list[dict[str, Any]], call: Call, client: dict[str, Any]) -> None:
    """Answer requests from stdin until it closes (``call`` may read stdin itself)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), name, tools, call, client)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def _call(params: dict[str, Any]) -> dict[str, Any]:
    """Each tool answers with its name and arguments (and its own oddity)."""
    text = f"{params['name']} got {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if params["name"] == "cut_emoji":  # json.dumps escapes the lone half as "\\ud83d"
        result["content"] = [{"type": "text", "text": "smile \ud83d"}]
    if params["name"] == "output_no_type":
        result["structuredContent"] = {"n": 7}
    return result


if __name__ == "__main__":
    serve("raw", TOOLS, _call, {})
