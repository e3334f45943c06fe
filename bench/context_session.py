"""A realistic scripted coding session for ``bench_context.py --strategies`` (issue 21).

A small project (40 modules of 30–150 lines, their tests, a check script) and a model that
works through it in episodes of ten steps, the way an agent fixes things: grep for a name,
read the module, read its test, run the checks, edit the module, run the checks again, read a
slice of a neighbour, glob, edit again, run again. Every turn has a line of reasoning and one
tool call; every tool runs for real. The script depends only on the step number, so every
strategy sees the same session (a summary request, asked without tools, gets a fixed answer).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

MODULES = 40
SUMMARY = (
    "## Goal\nFix the checks module by module.\n## Progress\nEdited and checked several "
    "modules.\n## Next steps\nContinue with the next module."
)
CHECK_SCRIPT = '''"""Prints a test report for one module (a stand-in for a test runner)."""
import sys

k = int(sys.argv[1])
tests = 12 + (k * 7) % 30
print(f"collected {tests} items from tests/test_mod{k}.py")
for i in range(tests):
    status = "FAILED" if (i * 5 + k) % 17 == 0 else "PASSED"
    print(f"tests/test_mod{k}.py::test_case_{i} {status}")
failed = sum(1 for i in range(tests) if (i * 5 + k) % 17 == 0)
if failed:
    print(f"____ test_case_0 ____\\n    def test_case_0():\\n>       assert mod{k}.f_{k}_0(2) == 4")
    print(f"E       assert 3 == 4\\nsrc/app/mod{k}.py:12: AssertionError")
print(f"==== {failed} failed, {tests - failed} passed in 0.{k:02d}s ====")
'''


def module_lines(k: int) -> int:
    """How many lines module ``k`` has (30–150)."""
    return 30 + (k * 37) % 121


def make_project(workspace: Path) -> None:
    """Write the project the session works on (once per workspace)."""
    if (workspace / "check.py").exists():
        return
    (workspace / "src" / "app").mkdir(parents=True, exist_ok=True)
    (workspace / "tests").mkdir(exist_ok=True)
    for k in range(MODULES):
        lines = [f'"""Module {k} of the app: arithmetic helpers."""', ""]
        n = 0
        while len(lines) < module_lines(k):
            lines += [
                f"def f_{k}_{n}(value: int) -> int:",
                f'    """Scale value by {n} (helper {k}.{n})."""',
                f"    return value * {n} + {k * 1000 + n}",
                "",
            ]
            n += 1
        (workspace / "src" / "app" / f"mod{k}.py").write_text("\n".join(lines) + "\n")
        test = [f"from app import mod{k}", ""]
        test += [f"def test_case_{i}():\n    assert mod{k}.f_{k}_{i}(1) >= 0\n" for i in range(6)]
        (workspace / "tests" / f"test_mod{k}.py").write_text("\n".join(test))
    (workspace / "check.py").write_text(CHECK_SCRIPT)


def _edit(step: int, k: int) -> dict[str, Any]:
    """An edit of one ``return`` line of module ``k`` no earlier step touched."""
    functions = (module_lines(k) - 2) // 4
    n = (step // 10) % max(1, functions)
    old = f"    return value * {n} + {k * 1000 + n}"
    return {
        "path": f"src/app/mod{k}.py",
        "old_string": old,
        "new_string": f"    return value * {n} + {k * 1000 + n}  # checked at step {step}",
    }


def turn(step: int) -> tuple[str, str, dict[str, Any]]:
    """``(reasoning, tool, arguments)`` of step ``step``."""
    episode, phase = divmod(step, 10)
    k, other = episode % MODULES, (episode * 7 + 3) % MODULES
    plan: list[tuple[str, str, dict[str, Any]]] = [
        (f"Where is helper {k} used?", "grep", {"pattern": f"f_{k}_1\\b", "path": "."}),
        (f"Reading module {k} before changing it.", "read_file", {"path": f"src/app/mod{k}.py"}),
        ("And its tests.", "read_file", {"path": f"tests/test_mod{k}.py"}),
        ("Running its checks.", "run_command", {"command": f"python3 check.py {k}"}),
        ("Fixing the failing helper.", "edit_file", _edit(step, k)),
        ("Checking again.", "run_command", {"command": f"python3 check.py {k}"}),
        (
            f"Module {other} calls into it; a look at its middle.",
            "read_file",
            {"path": f"src/app/mod{other}.py", "offset": 10, "limit": 40},
        ),
        ("Which tests exist?", "glob", {"pattern": f"tests/test_mod{k % 10}*.py"}),
        ("One more change in the same module.", "edit_file", _edit(step + 5, k)),
        ("Final check of this module.", "run_command", {"command": f"python3 check.py {k}"}),
    ]
    return plan[phase]


class SessionModel:
    """Plays :func:`turn` for ``steps`` steps, then ends; records every agent request and
    counts its input tokens (messages and tool schemas, as a server does)."""

    model_id = "bench:session"

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.step = 0
        self.stamps: list[float] = []
        self.requests: list[list[dict[str, Any]]] = []
        self.sent_tokens = 0
        self.side_tokens = 0
        self.side_requests = 0

    def complete(self, messages: Any, tools: Any, on_text: Any) -> Any:
        """One model turn (a summary when asked without tools)."""
        from mycode_core.providers.base import ModelReply, ReplyToolCall
        from mycode_core.tokens import count_message, count_text

        if not tools:
            self.side_requests += 1
            self.side_tokens += sum(count_message(m) for m in messages)
            return ModelReply(content=SUMMARY, usage={"input_tokens": 0, "output_tokens": 40})
        self.stamps.append(time.perf_counter())
        self.requests.append(list(messages))
        self.sent_tokens += sum(count_message(m) for m in messages)
        self.sent_tokens += count_text(json.dumps(tools, ensure_ascii=False))  # sent each time
        if self.step >= self.steps:
            return ModelReply(content="All modules checked.", finish_reason="stop")
        reasoning, name, arguments = turn(self.step)
        call = ReplyToolCall(id=f"c{self.step}", name=name, arguments=json.dumps(arguments))
        self.step += 1
        return ModelReply(content=reasoning, tool_calls=[call], finish_reason="tool_calls")
