"""A tiny language server for the tests: records what it was given in the file argv[1].

It writes its environment, asks its client ``workspace/configuration`` and records the answer,
publishes one warning for every document opened or changed, crashes on ``hover``, answers any
other request with ``null``, and adds its pid to the file ``argv[1]`` + ``.starts``.
"""

from __future__ import annotations

import json
import os
import sys


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length or 0))


def send(message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


record: dict = {"env": dict(os.environ)}
with open(sys.argv[1] + ".starts", "a") as starts:
    starts.write(f"{os.getpid()}\n")


def save() -> None:
    with open(sys.argv[1], "w") as out:
        json.dump(record, out)


while (message := read()) is not None:
    method = message.get("method")
    if method == "initialize":
        record["initialize"] = message["params"]
        send({"id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        send({"id": "cfg", "method": "workspace/configuration",
              "params": {"items": [{"section": "fake"}]}})  # fmt: skip
    elif message.get("id") == "cfg":
        record["configuration"] = message.get("result")
    elif method in ("textDocument/didOpen", "textDocument/didChange"):
        uri = message["params"]["textDocument"]["uri"]
        diagnostic = {"range": {"start": {"line": 0, "character": 0},
                                "end": {"line": 0, "character": 1}},
                      "severity": 2, "message": f"seen {method}", "source": "fake"}  # fmt: skip
        send({"method": "textDocument/publishDiagnostics",
              "params": {"uri": uri, "diagnostics": [diagnostic]}})  # fmt: skip
    elif method == "textDocument/hover":
        sys.exit(1)  # a server that crashes on a request
    elif method == "shutdown":
        send({"id": message["id"], "result": None})
    elif method == "exit":
        break
    elif method and "id" in message:
        send({"id": message["id"], "result": None})
    save()
save()
