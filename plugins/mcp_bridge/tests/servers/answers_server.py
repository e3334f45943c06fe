"""A stdio MCP server, JSON-RPC by hand, answering as real servers do beyond what the SDK's own
server sends: errors with JSON-RPC codes the SDK also uses for itself (-32000, -32001),
results that do not match their tool's output schema, content blocks of a type the SDK does
not know, tool names that collide once cleaned, an input schema typed ``["object", "null"]``.

Usage: ``python answers_server.py [--refuse-initialize]`` (no ``mcp`` import).
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT = {"type": "object"}
COUNT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOOLS: list[dict[str, Any]] = [
    {"name": "server_error", "description": "Fails with -32000 and data.", "inputSchema": OBJECT},
    {"name": "plain_server_error", "description": "Fails with -32000.", "inputSchema": OBJECT},
    {"name": "upstream_timeout", "description": "Fails with -32001.", "inputSchema": OBJECT},
    {"name": "off_schema", "description": "Structured content of another shape.",
     "inputSchema": OBJECT, "outputSchema": COUNT},
    {"name": "no_structured", "description": "An output schema, text only.",
     "inputSchema": OBJECT, "outputSchema": COUNT},
    {"name": "new_block", "description": "A content block of an unknown type.",
     "inputSchema": OBJECT},
    {"name": "a.b", "description": "Cleaned, it is a_b.", "inputSchema": OBJECT},
    {"name": "a_b", "description": "Its name needs no cleaning.", "inputSchema": OBJECT},
    {"name": "nullable_input", "description": "Input typed object or null.",
     "inputSchema": {"type": ["object", "null"], "properties": {"x": {"type": "integer"}}}},
    {"name": "plain", "description": "An ordinary tool.", "inputSchema": OBJECT},
]  # fmt: skip

ERRORS: dict[str, dict[str, Any]] = {
    "server_error": {"code": -32000, "message": "quota exceeded", "data": {"retry_after": 30}},
    "plain_server_error": {"code": -32000, "message": "Server error"},
    "upstream_timeout": {"code": -32001, "message": "the upstream API timed out"},
}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _result(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "off_schema":
        return {"content": [_text("n is seven")], "structuredContent": {"n": "seven"}}
    if name == "no_structured":
        return {"content": [_text("seven")]}
    if name == "new_block":
        return {"content": [_text("before"), {"type": "hologram", "frames": 3}]}
    return {"content": [_text(f"{name} got {json.dumps(arguments, sort_keys=True)}")]}


def _answer(message: dict[str, Any], refuse_initialize: bool) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message or method is None:
        return None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize" and refuse_initialize:
        reply["error"] = {"code": -32000, "message": "missing API key: set ANSWERS_KEY"}
    elif method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "answers", "version": "1"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") in ERRORS:
        reply["error"] = ERRORS[params["name"]]
    elif method == "tools/call":
        reply["result"] = _result(params.get("name", ""), params.get("arguments") or {})
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"no method {method}"}
    return reply


def main() -> None:
    refuse = "--refuse-initialize" in sys.argv[1:]
    for line in sys.stdin:
        if line.strip():
            reply = _answer(json.loads(line), refuse)
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
