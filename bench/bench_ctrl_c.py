"""Time from Ctrl-C to the idle prompt while a command runs (goal: ≤ 0.5 s).

An interactive ``mycode`` on a real pty, against the local fake OpenAI server, runs
``run_command`` with ``sleep 300`` (in bypass mode, so no question is asked); once the command
runs, Ctrl-C is typed and the clock stops when the ``interrupted`` summary and the next prompt
are on the screen. Median of ``--runs`` sessions.

    uv run python bench/bench_ctrl_c.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import clean_env

from mycode_core.testing import FakeOpenAIServer, turn
from mycode_core.testing.terminal import Terminal

GOAL_S = 0.5


def one_run(root: Path) -> float:
    workspace = root / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    env = clean_env(root / "home", MYCODE_LOAD_PLUGINS="builtin_tools", TERM="xterm")
    with FakeOpenAIServer() as server:
        call = {"id": "c1", "name": "run_command", "arguments": {"command": "sleep 300"}}
        server.enqueue(turn(tool_calls=[call]))
        argv = [sys.executable, "-m", "mycode_core", "--model", "m", "--base-url"]
        argv += [server.base_url, "--api-key", "k", "--permission-mode", "bypass"]
        term = Terminal([*argv, "--cwd", str(workspace)], env, workspace)
        try:
            term.expect("›", timeout=60)
            term.type("go\r")
            term.expect("running run_command", timeout=60)
            time.sleep(1.0)  # the command is surely running
            term.set_mark()
            pressed = time.monotonic()
            term.type("\x03")
            term.expect("interrupted ·", timeout=60, after_mark=True)
            term.set_mark()
            back = term.expect("›", timeout=60, after_mark=True)
            return back - pressed
        finally:
            term.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="mycode-bench-ctrlc-") as tmp:
        for index in range(args.runs):
            figures.append(one_run(Path(tmp) / str(index)))
    median = statistics.median(figures)
    print(
        f"Ctrl-C → idle prompt, command running: median {median * 1000:.0f} ms "
        f"(min {min(figures) * 1000:.0f}, max {max(figures) * 1000:.0f}, {args.runs} runs); "
        f"goal ≤ {GOAL_S * 1000:.0f} ms: {'met' if median <= GOAL_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
