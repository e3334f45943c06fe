"""Checkpoint cost per turn that edits one file in a 50,000-file repository (issue 20).

Times the checkpoints plugin's own work for one turn: the turn start, the copy aside before an
``edit_file`` call (``permission_verdict``), the bookkeeping after it (``tool_result_verdict``
with the call's real observation) and the ``max_mb`` check; median of N turns. Also prints the
space one turn takes. Goal: ≤ 10 ms per turn; space proportional to the files changed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mycode_checkpoints import permission_verdict, tool_result_verdict, user_prompt_verdict
from mycode_checkpoints.store import root

from mycode_core.config import load_settings
from mycode_core.records import Observation, RunContext, Tool, ToolCall, ToolResult

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def _repo(base: Path, files: int) -> Path:
    ws = base / "ws"
    for i in range(files):
        folder = ws / f"d{i // 500}"
        if i % 500 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{i}.py").write_text(f"x = {i}\n" * 20)
    return ws


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws, home = _repo(base, args.files), base / "home"
        home.mkdir()
        context = RunContext(workspace=ws, home=home, settings=load_settings(ws, home),
                             session_id="bench")  # fmt: skip
        tool = Tool(name="edit_file", description="", input_schema=SCHEMA, handler=lambda *a: None,
                    paths={"path": "write"})  # fmt: skip
        index = min(3500, args.files - 1)
        rel = f"d{index // 500}/f{index}.py"
        target = ws / rel
        timings = []
        for turn in range(args.turns):
            call = ToolCall(id=f"c{turn}", name="edit_file", paths={"path": target})
            started = time.perf_counter()
            user_prompt_verdict(prompt=f"turn {turn}", context=context)
            permission_verdict(call=call, tool=tool, context=context)
            target.write_text(f"y = {turn}\n" * 20)  # the tool's own work, not timed below
            middle = time.perf_counter()
            context.observations.append(
                Observation(
                    step=1,
                    call_id=call.id,
                    tool="edit_file",
                    signature="s",
                    result_hash="h",
                    mutated=[rel],
                )  # fmt: skip
            )
            tool_result_verdict(call=call, tool=tool, result=ToolResult(content="ok"),
                                context=context)  # fmt: skip
            ended = time.perf_counter()
            timings.append((middle - started) + (ended - middle))
        size = sum(p.stat().st_size for p in root(home).rglob("*") if p.is_file())
        median = statistics.median(timings) * 1000
        print(f"repository: {args.files} files; turns: {args.turns}")
        print(f"checkpoint cost per turn (median): {median:.2f} ms  (goal <= 10 ms)")
        print(f"space for {args.turns} turns of one 200-byte file: {size / 1024:.1f} KB "
              f"({size / args.turns:.0f} B per turn)")  # fmt: skip
        return 0 if median <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
