"""Launch-to-first-request: from starting ``mycode -p`` to the model server receiving the POST.

Starts a local fake OpenAI-compatible server (``mycode_core.testing.FakeOpenAIServer``), then
launches ``mycode -p hi --model m --base-url URL`` ``--runs`` times and measures, for each, the
time from ``Popen`` to the server receiving the first chat-completions request. Prints the
median with every installed plugin and with none (``MYCODE_LOAD_PLUGINS=``).

    uv run python bench/bench_first_request.py [--runs 10]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from common import bench_dir, interleaved, median_ms, mycode_script

from mycode_core.testing import FakeOpenAIServer, cli_env


def one_launch(server: FakeOpenAIServer, folder: Path, plugins: str | None) -> float:
    """Seconds from launch to the first request of one run."""
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    env = cli_env(folder / "home", {"MYCODE_LOAD_PLUGINS": plugins})
    seen = len(server.chat_requests)
    command = [mycode_script(), *server.cli_args("hi", output_format="json")]
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if not server.wait_for_requests(seen + 1, timeout=60):
        process.kill()
        raise SystemExit(f"no request arrived: {process.communicate()[1].decode()}")
    elapsed = server.chat_requests[seen].received_at - started
    _, stderr = process.communicate(timeout=60)
    if process.returncode != 0:
        raise SystemExit(f"mycode failed: {stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    folder = bench_dir("first")
    variants = {"all installed plugins": None, "no plugins": ""}
    with FakeOpenAIServer() as server:
        samples = interleaved(
            variants, args.runs, lambda plugins: one_launch(server, folder, plugins)
        )
    print(f"launch to first request, median of {args.runs} runs:")
    for name, values in samples.items():
        print(
            f"  {name:<22} {median_ms(values):7.1f} ms "
            f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"
        )


if __name__ == "__main__":
    main()
