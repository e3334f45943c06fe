"""Model views for the engine's unit tests: a task, then read_file calls with big results."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mycode_core.providers.base import ModelReply
from mycode_core.testing import TurnsModel

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


class SideModel(TurnsModel):
    """A recording scripted model that answers tool-less requests (summaries) with ``summary()``
    and keeps them in ``side_calls``."""

    def __init__(self, turns: list[dict[str, Any]], summary: Callable[[], str]) -> None:
        super().__init__(turns)
        self.summary = summary
        self.side_calls: list[list[dict[str, Any]]] = []

    def complete(self, messages: Any, tools: Any, on_text: Any) -> Any:
        if not tools:
            self.side_calls.append(json.loads(json.dumps(messages)))
            return ModelReply(content=self.summary(), usage={"input_tokens": 0})
        return super().complete(messages, tools, on_text)
