"""mycode (and, when node/npm are present, pi) against one local fake OpenAI-compatible server.

Figures, for each agent in the same run:

* first request: wall from launch to the server receiving the first chat-completions
  request (median of ``--runs`` warm runs, after one warm-up), and its ratio to
  ``python -c "import click"`` (timed once in every round, so a machine that speeds up or
  slows down during the benchmark changes both alike);
* own time per step of a ``--steps`` session (the model reads a new small file each step): the
  time from the server finishing answer *k* to receiving request *k+1*, so the server's own work
  (it never parses the body) is not counted; the median of steps 1–30 and of the last 30, and
  their ratio (goal ≤ 1.3×);
* exit lag: from the final answer written to the process gone (goal ≤ 100 ms);
* first-request bytes, and peak RSS of the process (``ru_maxrss``; goal ≤ 110 MB).

Runs are warm: ``PYTHONDONTWRITEBYTECODE`` is dropped from the agents' environment so the
warm-up run leaves bytecode caches behind (with it set, every launch compiles each module).

    uv run python bench/bench_peers.py [--runs 7] [--steps 20,100,300] [--long 2000] [--no-pi]

pi (``@mariozechner/pi-coding-agent``) is installed into a temp folder with npm from the
registry the first time (never into the repository); ``--no-pi`` skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common import bench_dir, clean_env, mycode_script

PI_PACKAGE = "@mariozechner/pi-coding-agent"


@dataclass
class Session:
    """What the server saw of one agent process."""

    steps: int
    received: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    first_bytes: int = 0
    tool_name: str = "read_file"
    final_done: threading.Event = field(default_factory=threading.Event)


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _answer(index: int, session: Session) -> bytes:
    base = {"id": f"c{index}", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    if index < session.steps:
        call = {
            "index": 0,
            "id": f"call_{index}",
            "type": "function",
            "function": {
                "name": session.tool_name,
                "arguments": json.dumps({"path": f"f{index}.txt"}),
            },
        }
        delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": "All done."}, "stop"
    chunks = [
        _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        _sse(
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
            }
        ),
        b"data: [DONE]\n\n",
    ]
    return b"".join(chunks)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the access log."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """``/models`` lists the model with a big window; anything else is 404."""
        if self.path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": "m", "context_length": 1_000_000}]}
            self._send(200, json.dumps(data).encode(), "application/json")
        else:
            self._send(404, b'{"error":{"message":"no"}}', "application/json")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """Answer the next step of the current session without parsing the body."""
        at = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        session = self.server.session
        index = len(session.received)
        session.received.append(at)
        if index == 0:
            session.first_bytes = len(body)
        self._send(200, _answer(index, session), "text/event-stream")
        session.done.append(time.monotonic())
        if index >= session.steps:
            session.final_done.set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    session: Session


@dataclass
class Agent:
    """How to launch one agent at the server."""

    name: str
    command: Callable[[str, int], list[str]]
    env: Callable[[Path], dict[str, str]]
    tool_name: str


@dataclass
class Run:
    """One launch's figures."""

    first_request: float
    own: list[float]
    exit_lag: float
    first_bytes: int
    peak_rss_mb: float
    total: float


def launch(agent: Agent, server: _Server, steps: int, folder: Path) -> Run:
    """Run one session of ``steps`` tool steps and collect its figures."""
    workspace = Path(tempfile.mkdtemp(dir=folder, prefix="ws-"))
    for index in range(steps):
        (workspace / f"f{index}.txt").write_text(f"file {index}\n" * 5)
    session = Session(steps=steps, tool_name=agent.tool_name)
    server.session = session
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    started = time.monotonic()
    process = subprocess.Popen(
        agent.command(base_url, steps),
        cwd=workspace,
        env=agent.env(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    ended = time.monotonic()
    process.returncode = os.waitstatus_to_exitcode(status)
    reader.join(5)
    if not session.final_done.is_set() or process.returncode != 0:
        text = b"".join(errors).decode(errors="replace")[-2000:]
        raise SystemExit(
            f"{agent.name}: {len(session.received)}/{steps + 1} requests, exit "
            f"{process.returncode}: {text}"
        )
    own = [session.received[i + 1] - session.done[i] for i in range(steps)]
    return Run(
        first_request=session.received[0] - started,
        own=own,
        exit_lag=ended - session.done[-1],
        first_bytes=session.first_bytes,
        peak_rss_mb=usage.ru_maxrss / 1024,
        total=ended - started,
    )


def mycode_agent() -> Agent:
    """mycode -p against the server, all installed plugins, a 1M-token window."""

    def command(base_url: str, steps: int) -> list[str]:
        return [
            mycode_script(),
            "-p",
            "read the files",
            "--model",
            "m",
            "--base-url",
            base_url,
            "--api-key",
            "x",
            "--output-format",
            "json",
        ]

    def env(folder: Path) -> dict[str, str]:
        home = folder / "mycode-home"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text("context_window = 1000000\n")
        env = clean_env(home, MYCODE_MAX_STEPS="5000")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # warm runs: the warm-up writes the caches
        return env

    return Agent("mycode", command, env, "read_file")


def pi_agent(folder: Path) -> Agent | None:
    """pi against the server, or ``None`` when node/npm are missing or the install fails."""
    if not (shutil.which("node") and shutil.which("npm")):
        return None
    prefix = Path(tempfile.gettempdir()) / "mycode-bench-pi"
    binary = prefix / "node_modules" / ".bin" / "pi"
    if not binary.exists():
        prefix.mkdir(exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(prefix), PI_PACKAGE],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0 or not binary.exists():
            print(f"pi: npm install failed: {done.stderr.decode(errors='replace')[-300:]}")
            return None

    def env(run_folder: Path) -> dict[str, str]:
        agent_dir = run_folder / "pi-agent"
        agent_dir.mkdir(exist_ok=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": os.environ.get("BENCH_PI_BASE_URL", ""),
                    "api": "openai-completions",
                    "apiKey": "x",
                    "models": [{"id": "m", "contextWindow": 1_000_000, "maxTokens": 4096}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(models))
        env = clean_env(run_folder / "mycode-home")
        env["PI_CODING_AGENT_DIR"] = str(agent_dir)
        env["HOME"] = str(run_folder)
        return env

    def command(base_url: str, steps: int) -> list[str]:
        os.environ["BENCH_PI_BASE_URL"] = base_url
        return [str(binary), "-p", "--provider", "fake", "--model", "m", "read the files"]

    return Agent("pi", command, env, "read")


def click_import_seconds(runs: int) -> float:
    """Median wall of ``python -c "import click"``."""
    values = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import click"], check=True)
        values.append(time.perf_counter() - started)
    return statistics.median(values[1:])


def _window(values: list[float], start: int, stop: int) -> float:
    return statistics.median(values[start:stop]) * 1000


def main() -> None:
    """Measure and print the figures side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--steps", default="20,100,300")
    parser.add_argument("--long", type=int, default=2000, help="0 skips the long session")
    parser.add_argument("--no-pi", action="store_true")
    args = parser.parse_args()
    folder = bench_dir("peers")
    server = _Server(("127.0.0.1", 0), _Handler)
    server.session = Session(steps=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    agents = [mycode_agent()]
    if not args.no_pi:
        pi = pi_agent(folder)
        if pi is not None:
            os.environ["BENCH_PI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
            agents.append(pi)
    results: dict[str, dict[Any, Any]] = {agent.name: {} for agent in agents}
    for agent in agents:
        launch(agent, server, 1, folder)  # warm-up
    first: dict[str, list[Run]] = {agent.name: [] for agent in agents}
    clicks = [click_import_seconds(1)]  # one warm-up run inside, then one timed run
    for _ in range(args.runs):  # `import click` is timed beside each round: drift hits both
        clicks.append(click_import_seconds(1))
        for agent in agents:
            first[agent.name].append(launch(agent, server, 1, folder))
    click = statistics.median(clicks[1:])
    print(f'python -c "import click": {click * 1000:.1f} ms (median of {args.runs}, interleaved)')
    for agent in agents:
        runs = first[agent.name]
        results[agent.name]["first"] = statistics.median(r.first_request for r in runs)
        results[agent.name]["exit"] = statistics.median(r.exit_lag for r in runs)
        results[agent.name]["bytes"] = runs[0].first_bytes
        results[agent.name]["rss1"] = max(r.peak_rss_mb for r in runs)
    lengths = [int(n) for n in args.steps.split(",") if n]
    if args.long:
        lengths.append(args.long)
    for steps in lengths:
        for agent in agents:
            run = launch(agent, server, steps, folder)
            results[agent.name][steps] = run
    print()
    for agent in agents:
        data = results[agent.name]
        print(f"== {agent.name}")
        print(
            f"  first request  {data['first'] * 1000:7.1f} ms  "
            f"({data['first'] / click:.2f}× import click; goal ≤ 6×)"
        )
        print(f"  exit lag       {data['exit'] * 1000:7.1f} ms  (goal ≤ 100 ms)")
        print(f"  first request  {data['bytes']:7d} bytes")
        for steps in lengths:
            run = data[steps]
            span = min(30, steps)
            head = _window(run.own, 0, span)
            tail = _window(run.own, steps - span, steps)
            print(
                f"  {steps:5d} steps: own/step first {span} {head:6.1f} ms, last {span} "
                f"{tail:6.1f} ms (ratio {tail / head:.2f}), total {run.total:6.1f} s, "
                f"own total {sum(run.own):6.1f} s, exit {run.exit_lag * 1000:.0f} ms, "
                f"peak RSS {run.peak_rss_mb:.1f} MB"
            )
    if len(agents) > 1:
        mine, other = results[agents[0].name], results[agents[1].name]
        print(f"\n== ratios mycode / {agents[1].name}")
        print(f"  first request {mine['first'] / other['first']:.2f}")
        print(f"  exit lag      {mine['exit'] / max(other['exit'], 1e-6):.2f}")
        for steps in lengths:
            print(f"  {steps} steps own total {sum(mine[steps].own) / sum(other[steps].own):.2f}")
    server.shutdown()


if __name__ == "__main__":
    main()
