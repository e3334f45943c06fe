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

from raw_server import serve  # beside this file

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


def call(params: dict[str, Any]) -> dict[str, Any]:
    name = params["name"]
    if name == "ask_user":
        text = ask("elicitation/create", ELICIT, "q1")
    elif name == "client_caps":
        text = json.dumps(CLIENT.get("capabilities"), sort_keys=True)
    elif name == "ask_model":
        text = ask("sampling/createMessage", SAMPLE, "q2")
    else:
        first = ask("elicitation/create", ELICIT, "q3")
        text = first + "\n" + ask("sampling/createMessage", SAMPLE, "q4")
    return {"content": [{"type": "text", "text": text}]}


if __name__ == "__main__":
    serve("asking", TOOLS, call, CLIENT)
