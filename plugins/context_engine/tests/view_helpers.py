"""Model views for the engine's unit tests: a task, then read_file calls with big results."""

from __future__ import annotations

import json
from typing import Any

BIG = "\n".join(f"result line {n}: " + "x" * 60 for n in range(40))


def read_turns(count: int, size: str = BIG) -> list[dict[str, Any]]:
    """System, task, then ``count`` assistant calls to ``read_file`` each with a ``size`` result."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "SYSTEM"},
        {"role": "user", "content": "the task"},
    ]
    for i in range(count):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{i}.py"})},
        }
        messages.append({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{i}:{size}"})
    return messages
