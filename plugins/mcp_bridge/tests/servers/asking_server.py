"""A stdio MCP server, JSON-RPC by hand, that asks the client something in the middle of a
call although the client never said it could answer: ``elicitation/create`` (``ask_user``)
and ``sampling/createMessage`` (``ask_model``). The call's answer quotes what the client
replied, so a test sees the refusal the server got; ``ask_both`` asks both, then answers.

Usage: ``python asking_server.py`` (no ``mcp`` import).
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "ask_user", "description": "Asks the user for a name.", "inputSchema": OBJECT},
    {"name": "ask_model", "description": "Asks the client's model.", "inputSchema": OBJECT},
    {"name": "ask_both", "description": "Asks the user, then the model.", "inputSchema": OBJECT},
    {"name": "client_caps", "description": "What the client declared.", "inputSchema": OBJECT},
]
CLIENT: dict[str, Any] = {}
"""The client's ``initialize`` params."""
ELICIT = {
    "message": "Which name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
    "maxTokens": 10,
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ask(method: str, params: dict[str, Any], request_id: str) -> str:
    """Send a request to the client and wait for its reply (answering pings meanwhile)."""
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            reply = message.get("result", {"error": message.get("error")})
            return f"{method} -> {json.dumps(reply, sort_keys=True)}"
        if message.get("method") == "ping":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
    sys.exit(0)


def call(name: str) -> str:
    if name == "ask_user":
        return ask("elicitation/create", ELICIT, "q1")
    if name == "client_caps":
        return json.dumps(CLIENT.get("capabilities"), sort_keys=True)
    if name == "ask_model":
        return ask("sampling/createMessage", SAMPLE, "q2")
    first = ask("elicitation/create", ELICIT, "q3")
    return first + "\n" + ask("sampling/createMessage", SAMPLE, "q4")


def main() -> None:
    """Answer requests from stdin until it closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            CLIENT.update(params)
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "asking", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            text = call(params["name"])
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            continue
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
