"""Issue 20: what probing the local model servers adds to a start with no model configured.

(1) In process: the wall of ``local_servers()`` over the four usual ports (nothing should
listen there; the script says when something does). (2) The same against four black holes
(sockets that accept and never answer): the 300 ms budget caps it. (3) ``mycode doctor`` with no
model, probing (the default list) vs not probing (``MYCODE_LOCAL_SERVERS=""``), median of N
interleaved runs. Goal: probing when nothing listens adds ≤ 300 ms.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import time

from common import bench_dir, clean_env, interleaved, median_ms, medians, mycode_script

from mycode_core.cli import local_models


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _probe_walls(runs: int) -> list[float]:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        local_models.local_servers()
        walls.append(time.perf_counter() - started)
    return walls


def _wall(command: list[str], env: dict[str, str]) -> float:
    """Seconds of one run; doctor exits 1 here (no model is a problem), so no check."""
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    """Print the figures and whether the goal holds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    busy = [port for _name, port in local_models.KNOWN if _listening(port)]
    if busy:
        print(f"note: something listens on {busy}: (1) and (3) are not the nothing-listens case")
    os.environ.pop(local_models.PROBE_ENV, None)
    alone = _probe_walls(runs)
    print(f"(1) nothing listening: median {median_ms(alone):.1f} ms, max {max(alone) * 1e3:.1f} ms")
    holes = []
    for _ in range(4):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        holes.append(sock)
    os.environ[local_models.PROBE_ENV] = ",".join(
        f"http://127.0.0.1:{sock.getsockname()[1]}/v1" for sock in holes
    )
    capped = _probe_walls(max(3, runs // 3))
    os.environ.pop(local_models.PROBE_ENV)
    for sock in holes:
        sock.close()
    print(
        f"(2) four servers that never answer: median {median_ms(capped):.1f} ms, "
        f"max {max(capped) * 1e3:.1f} ms (budget {local_models.BUDGET * 1e3:.0f} ms)"
    )
    work = bench_dir("local-probe")
    command = [mycode_script(), "doctor", "--cwd", str(work)]
    variants = {
        "probing": clean_env(work / "home"),
        "not probing": clean_env(work / "home", **{local_models.PROBE_ENV: ""}),
    }
    med = medians(interleaved(variants, runs, lambda env: _wall(command, env)))
    added = (med["probing"] - med["not probing"]) * 1e3
    print(
        f"(3) mycode doctor, no model: probing {med['probing'] * 1e3:.0f} ms, not probing "
        f"{med['not probing'] * 1e3:.0f} ms: {added:+.0f} ms"
    )
    print(f"goal ≤ 300 ms added: {'met' if added <= 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
