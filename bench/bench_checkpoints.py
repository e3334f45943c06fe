"""Checkpoint cost per turn that edits one file in a 50,000-file repository (issue 20).

Times the checkpoints plugin's own work for one turn: the turn start, the copy aside before an
``edit_file`` call (``permission_verdict``), the bookkeeping after it (``tool_result_verdict``
with the call's real observation) and the ``max_mb`` check; median of N turns. Also prints the
space one turn takes. Goal: ≤ 10 ms per turn; space proportional to the files changed.

``--command``: the repository is a git work tree and the call is a command (a tool that declares
no path it writes): the checkpoint work around it with and without keeping the git index as it
was before the call (a hard link; ``--copy``: the copy made when ``MYCODE_HOME`` is on another
filesystem), interleaved, median of N; and the index keeping alone.
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


def _observe(context: RunContext, call: ToolCall, rel: str) -> None:
    """What the core records after ``call`` changed ``rel`` (the plugin reads it)."""
    context.observations.append(
        Observation(
            step=1, call_id=call.id, tool=call.name, signature="s", result_hash="h", mutated=[rel]
        )  # fmt: skip
    )


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
    parser.add_argument("--command", action="store_true", help="a command in a git work tree")
    parser.add_argument("--copy", action="store_true", help="with --command: copy, never link")
    args = parser.parse_args()
    if args.command:
        return _command(args)
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
            _observe(context, call, rel)
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


def _command(args: argparse.Namespace) -> int:
    """The checkpoint cost around one command in a git work tree, with and without the index
    kept before it."""
    import os
    import subprocess

    from mycode_checkpoints import recorder

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws, home = _repo(base, args.files), base / "home"
        home.mkdir()
        git = ["git", "-c", "user.email=b@b", "-c", "user.name=b"]
        subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
        subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
        subprocess.run([*git, "commit", "-qm", "x"], cwd=ws, check=True)
        if args.copy:

            def no_link(*_a: object, **_k: object) -> None:
                raise OSError(18, "no link")

            recorder.os.link = no_link  # type: ignore[assignment]
        context = RunContext(workspace=ws, home=home, settings=load_settings(ws, home),
                             session_id="bench")  # fmt: skip
        tool = Tool(name="run_command", description="", input_schema=SCHEMA,
                    handler=lambda *a: None)  # fmt: skip
        kept = recorder.recorder_for(context)
        keep_index = kept._keep_index
        index = min(3500, args.files - 1)
        rel = f"d{index // 500}/f{index}.py"
        target = ws / rel
        timings: dict[bool, list[float]] = {True: [], False: []}
        alone = []
        for turn in range(args.turns):
            for with_index in (True, False):
                kept._keep_index = keep_index if with_index else lambda _c: None  # type: ignore
                call = ToolCall(id=f"c{turn}-{with_index}", name="run_command")
                started = time.perf_counter()
                user_prompt_verdict(prompt=f"turn {turn}", context=context)
                permission_verdict(call=call, tool=tool, context=context)
                middle = time.perf_counter()
                target.write_text(f"y = {turn}\n" * 20)  # the command's work, not timed
                resumed = time.perf_counter()
                _observe(context, call, "d7/f3500.py")
                tool_result_verdict(call=call, tool=tool, result=ToolResult(content="ok"),
                                    context=context)  # fmt: skip
                timings[with_index].append(middle - started + time.perf_counter() - resumed)
            started = time.perf_counter()
            keep_index("alone")
            kept.call_ended("alone")
            alone.append(time.perf_counter() - started)
        size = os.path.getsize(ws / ".git" / "index")
        how = "copy" if args.copy else "hard link"
        with_ms, without_ms = (statistics.median(timings[k]) * 1000 for k in (True, False))
        print(f"git work tree: {args.files} files, index {size / 1e6:.1f} MB; turns: {args.turns}")
        print(f"checkpoint work around one command: {with_ms:.2f} ms with the index kept "
              f"({how}), {without_ms:.2f} ms without (median)")  # fmt: skip
        print(f"keeping the index alone ({how}) and dropping it: "
              f"{statistics.median(alone) * 1000:.3f} ms (median)")  # fmt: skip
        return 0


if __name__ == "__main__":
    sys.exit(main())
