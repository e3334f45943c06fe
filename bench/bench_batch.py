"""``mycode batch``: parallel speedup, per-task overhead, and a batch of 200 trivial tasks.

* ``speedup``: 8 tasks against a local model server that takes 1 s per turn (``--turns``, 2 by
  default: a ``write_file`` call, then a final answer), ``--workers 1`` vs ``--workers 4``, on
  the local executor and on Ray. Goal: >= 3x at 4 workers (model-latency bound).
* ``overhead``: the median wall of a bare ``mycode -p`` (scripted model, 1 turn) vs the wall
  per task of a batch of the same runs with one worker (local, and Ray on an already running
  cluster) -- the batch's own cost per task: the copy, the diff, the records.
* ``many``: 200 trivial tasks (scripted, 1 turn), 4 workers: total wall and the peak RSS of
  the coordinator process (``VmHWM``, polled).

    uv run python bench/bench_batch.py [--only speedup|overhead|many] [--no-ray] [--many 200]
        [--runs 8] [--latency 1.0] [--turns 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common import median_seconds

from mycode_core.testing import cli_env, completion_body, stream_chunks, turn

LATENCY = 1.0
TURNS = 2
GOAL = 3.0


class _SlowModel(BaseHTTPRequestHandler):
    """Each turn takes LATENCY s: write_file calls for TURNS - 1 turns, then the final answer."""

    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet."""

    def do_GET(self) -> None:  # noqa: N802
        """``/models``: one model (some clients ask for it at start)."""
        data = json.dumps({"object": "list", "data": [{"id": "slow", "object": "model"}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def do_POST(self) -> None:  # noqa: N802
        """Answer one chat-completions request after LATENCY seconds."""
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        messages = body.get("messages") or []
        tool_results = sum(1 for m in messages if m.get("role") == "tool")
        if tool_results >= TURNS - 1:
            spec = turn("done", usage={"prompt_tokens": 50, "completion_tokens": 5}).turn
        else:
            call = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x\n"}}
            spec = turn(tool_calls=[call], usage={"prompt_tokens": 40, "completion_tokens": 9}).turn
        assert spec is not None
        time.sleep(LATENCY)
        if body.get("stream"):
            data = b"".join(stream_chunks(spec))
            content_type = "text/event-stream"
        else:
            data = json.dumps(completion_body(spec)).encode()
            content_type = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()
        self.wfile.write(data)


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("a small project\n", encoding="utf-8")
    return ws


def _tasks(root: Path, count: int, model: str | None = None) -> Path:
    _workspace(root)
    path = root / f"tasks-{count}.jsonl"
    extra = {"model": model} if model else {}
    lines = [
        json.dumps({"id": f"t{i}", "prompt": "write out.txt", "workspace": "ws", **extra})
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _batch(tasks: Path, out: Path, home: Path, *args: str) -> tuple[float, int, int]:
    """Run a batch; return (wall seconds, exit code, coordinator peak RSS in KiB)."""
    flags = ["--permission-mode", "bypass", "--output-format", "json", *args]
    cmd = [sys.executable, "-m", "mycode_core", "batch", str(tasks), "--out", str(out), *flags]
    began = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=tasks.parent, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    peak = 0
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    proc.communicate()
    return time.monotonic() - began, proc.returncode, peak


def speedup(root: Path, use_ray: bool, address: str | None) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowModel)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    tasks = _tasks(root / "speedup", 8)
    common = ["--model", "slow", "--base-url", url, "--api-key", "k"]
    executors: list[tuple[str, list[str]]] = [("local", [])]
    if use_ray and address:
        executors.append(("ray", ["--executor", "ray", "--ray-address", address]))
    print(f"speedup: 8 tasks, {TURNS} turns each, {LATENCY:.0f} s model latency per turn")
    for name, extra in executors:
        walls = {}
        for workers in (1, 4):
            out = root / "speedup" / f"out-{name}-{workers}"
            wall, code, _ = _batch(
                tasks, out, root / "home", *common, *extra, "--workers", str(workers)
            )
            walls[workers] = wall
            print(f"  {name:5} workers={workers}: {wall:6.1f} s (exit {code})")
        ratio = walls[1] / walls[4]
        verdict = "ok" if ratio >= GOAL else "BELOW GOAL"
        print(f"  {name:5} speedup at 4 workers: {ratio:.2f}x (goal >= {GOAL}x) {verdict}")
    server.shutdown()


def overhead(root: Path, runs: int, use_ray: bool, address: str | None) -> None:
    base = root / "overhead"
    ws = _workspace(base)
    script = base / "one.json"
    script.write_text(json.dumps([{"content": "done"}]), encoding="utf-8")
    model = f"scripted:{script}"
    bare_command = [sys.executable, "-m", "mycode_core", "-p", "hi", "--model", model]
    bare_command += ["--cwd", str(ws)]
    bare_ms = 1000 * median_seconds(
        partial(
            subprocess.run,
            bare_command,
            env=cli_env(base / "home-bare"),
            check=True,
            capture_output=True,
        ),
        runs,
    )
    tasks = _tasks(base, runs, model)
    print(f"overhead: bare `mycode -p` median {bare_ms:.0f} ms ({runs} runs)")
    executors: list[tuple[str, list[str]]] = [("local", [])]
    if use_ray and address:
        executors.append(("ray", ["--executor", "ray", "--ray-address", address]))
    for name, extra in executors:
        wall, code, _ = _batch(tasks, base / f"out-{name}", base / "home", "--workers", "1", *extra)
        per_task = wall / runs * 1000
        print(
            f"  {name:5} batch, 1 worker: {per_task:.0f} ms/task -> overhead "
            f"{per_task - bare_ms:+.0f} ms/task (exit {code}, includes the coordinator start)"
        )


def many(root: Path, count: int) -> None:
    base = root / "many"
    script = base / "one.json"
    base.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps([{"content": "done"}]), encoding="utf-8")
    tasks = _tasks(base, count, f"scripted:{script}")
    wall, code, peak = _batch(tasks, base / "out", base / "home", "--workers", "4")
    print(
        f"many: {count} trivial tasks, 4 workers: {wall:.1f} s total "
        f"({wall / count * 1000:.0f} ms/task), coordinator peak RSS {peak / 1024:.0f} MiB "
        f"(exit {code})"
    )


def main() -> None:
    global LATENCY, TURNS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=("speedup", "overhead", "many"))
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--many", type=int, default=200)
    parser.add_argument("--latency", type=float, default=LATENCY, help="model seconds per turn")
    parser.add_argument("--turns", type=int, default=TURNS, help="model turns per task (>= 2)")
    args = parser.parse_args()
    LATENCY = args.latency
    TURNS = max(2, args.turns)
    use_ray = not args.no_ray and args.only in (None, "speedup", "overhead")
    address = None
    ray: Any = None
    if use_ray:
        try:
            import ray
        except ImportError:
            print("ray not installed: Ray figures skipped")
            use_ray = False
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp)
        if use_ray and ray is not None:
            began = time.monotonic()
            context = ray.init(
                num_cpus=8, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
            )
            address = str(context.address_info["gcs_address"])
            print(f"ray: local cluster up in {time.monotonic() - began:.1f} s at {address}")
        try:
            if args.only in (None, "speedup"):
                speedup(root, use_ray, address)
            if args.only in (None, "overhead"):
                overhead(root, args.runs, use_ray, address)
            if args.only in (None, "many"):
                many(root, args.many)
        finally:
            if ray is not None and use_ray:
                ray.shutdown()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
