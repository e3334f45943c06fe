"""The Ray executor against a real local Ray cluster (started once for this module)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import (
    BYPASS,
    batch_command,
    folder,
    git_repo,
    on_ray,
    results,
    run_batch,
    task,
    write_tasks,
    writer_script,
)

VOLATILE = ("duration_ms", "session_id", "patch", "host")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A local Ray head started in this process; every Ray process goes at ``shutdown``."""
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # as the executor does
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (pip install 'mycode-batch[ray]')"
    )
    import signal

    # Ray's workers inherit SIGINT from here; under a script's `cmd &` it is ignored, and then
    # Ray's own cancel cannot interrupt a task (the batch's cancel marker still stops it)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        context = ray.init(
            num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


def _tasks(tmp_path: Path) -> Path:
    git_repo(tmp_path / "gitws", {"a.py": "a = 1\n"})
    folder(tmp_path / "plain", {"b.txt": "b\n"})
    return write_tasks(
        tmp_path / "tasks.jsonl",
        [
            task("git", "gitws", model=writer_script(tmp_path / "g.json", "g.txt", "from git\n")),
            task(
                "plain", "plain", model=writer_script(tmp_path / "p.json", "p.txt", "from plain\n")
            ),
            task(
                "setup-fails",
                "plain",
                setup="exit 4",
                model=writer_script(tmp_path / "x.json", "x.txt", "x\n"),
            ),
        ],
    )


def _stable(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        k: {f: v for f, v in r.items() if f not in VOLATILE} for k, r in sorted(records.items())
    }


def test_ray_and_local_give_the_same_results(tmp_path: Path, ray_address: str) -> None:
    tasks = _tasks(tmp_path)
    home = tmp_path / "home"
    local = run_batch(tasks, tmp_path / "local", home, *BYPASS)
    remote = run_batch(
        tasks,
        tmp_path / "ray",
        home,
        *BYPASS,
        *on_ray(ray_address),
        "--output-format",
        "stream-json",
    )
    assert local.rc == remote.rc == 1, remote.stderr  # setup-fails did not complete
    assert _stable(results(tmp_path / "local")) == _stable(results(tmp_path / "ray"))
    assert _stable(results(tmp_path / "ray"))["git"]["stop_reason"] == "completed"
    local_preds = json.loads((tmp_path / "local" / "preds.json").read_text())
    ray_preds = json.loads((tmp_path / "ray" / "preds.json").read_text())
    assert local_preds == ray_preds
    assert "+from git" in ray_preds["git"]["model_patch"]
    # results streamed back one by one as the Ray tasks ended
    assert sorted(e["id"] for e in remote.of_type("task_end")) == ["git", "plain", "setup-fails"]
    assert (tmp_path / "ray" / "tasks" / "git" / "transcript.jsonl").is_file()


def test_the_users_model_environment_reaches_tasks_on_a_running_cluster(
    tmp_path: Path, ray_address: str
) -> None:
    """A cluster's workers have the environment of whoever started it, not of the shell
    that runs the batch: the key and endpoint exported there must travel with each task."""
    from mycode_core.testing import FakeOpenAIServer

    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("t")])
    with FakeOpenAIServer(final_text="done") as server:
        env = {"MYCODE_MODEL": "m", "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-e"}
        run = run_batch(tasks, tmp_path / "out", tmp_path / "home", *on_ray(ray_address), env=env)
        keys = {r.headers.get("authorization") for r in server.chat_requests}
    assert run.rc == 0, run.stderr
    assert results(tmp_path / "out")["t"]["stop_reason"] == "completed"
    assert keys == {"Bearer sk-e"}
    assert "sk-e" not in (tmp_path / "out" / "tasks" / "t" / "log.txt").read_text()


def test_a_lost_worker_is_retried_once_then_the_task_fails(
    tmp_path: Path, ray_address: str
) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    counter = tmp_path / "attempts.txt"
    model = writer_script(tmp_path / "s.json", "n.txt", "n\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            # setup kills the Ray worker process running the task (its parent)
            task(
                "crashes", model=model, setup=f"echo attempt >> {counter}; kill -9 $PPID; sleep 30"
            ),
            task("fine", model=model),
        ],
    )
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS, *on_ray(ray_address))
    assert run.rc == 1, run.stderr
    records = results(out)
    assert records["crashes"]["stop_reason"] == "worker_lost"
    assert records["crashes"]["attempts"] == 2
    assert counter.read_text().splitlines() == ["attempt", "attempt"]
    assert records["fine"]["stop_reason"] == "completed"


def test_an_unreachable_ray_address_is_exit_2_naming_it(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "workspace": "ws"}])
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"127.0.0.1:{port}"
    run = run_batch(
        tasks, tmp_path / "out", tmp_path / "home", "--executor", "ray", "--ray-address", address
    )
    assert run.rc == 2
    assert address in run.stderr and "unreachable" in run.stderr
    assert "Traceback" not in run.stderr


def test_without_an_address_a_local_ray_is_started_for_the_run(tmp_path: Path) -> None:
    """A new one, even when another cluster is known (RAY_ADDRESS, a `ray start` of this
    machine): joining that with a CPU count of our own is an error in Ray."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'mycode-batch[ray]')")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        elsewhere = f"127.0.0.1:{sock.getsockname()[1]}"
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "n.txt", "n\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": "p", "workspace": "ws", "model": model} for i in range(2)],
    )
    run = run_batch(
        tasks,
        tmp_path / "out",
        tmp_path / "home",
        "--executor",
        "ray",
        "--workers",
        "2",
        *BYPASS,
        env={"RAY_ADDRESS": elsewhere},
    )
    assert run.rc == 0, run.stderr
    assert {r["stop_reason"] for r in results(tmp_path / "out").values()} == {"completed"}


def test_ctrl_c_twice_cancels_the_running_ray_tasks(tmp_path: Path, ray_address: str) -> None:
    import os
    import signal
    import subprocess
    import time

    from batch_helpers import command_script

    from mycode_core.testing import cli_env, signals_as_in_a_terminal

    folder(tmp_path / "ws", {"a.txt": "a\n"})
    marker = f"ray-slept-{os.getpid()}-{tmp_path.name}"  # other runs' processes don't count
    model = command_script(tmp_path / "s.json", f"sleep 120 && echo {marker} > s.txt")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": "p", "workspace": "ws", "model": model} for i in range(2)],
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        batch_command(
            tasks,
            out,
            *on_ray(ray_address),
            *BYPASS,
            "--output-format",
            "stream-json",
        ),
        cwd=tmp_path,
        # on a hang, SIGABRT makes faulthandler print every thread's stack (see below)
        env=cli_env(tmp_path / "home", {"PYTHONFAULTHANDLER": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=signals_as_in_a_terminal,
    )
    deadline = time.monotonic() + 180
    transcripts = [out / "tasks" / f"t{i}" / "transcript.jsonl" for i in range(2)]
    while time.monotonic() < deadline and not all(
        t.exists() and "tool_call" in t.read_text() for t in transcripts
    ):
        time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole group
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=100)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        stdout, stderr = proc.communicate(timeout=30)
        raise AssertionError(f"the batch did not end after Ctrl-C twice:\n{stderr}") from None
    assert proc.returncode == 130, stderr
    assert "cancelling the running tasks" in stdout
    assert not (out / "results.jsonl").exists()
    # Ray reports a cancelled task before its worker has finished killing the run's tree, so
    # the processes may outlive the batch by a moment (seconds on a loaded machine), not more
    gone_by = time.monotonic() + 60
    while True:
        left = subprocess.run(
            ["pgrep", "-f", f"sleep 120 && echo {marker}"], capture_output=True, text=True
        )
        if not left.stdout.split() or time.monotonic() > gone_by:
            break
        time.sleep(0.5)
    assert left.stdout.split() == []  # killed: a `sleep 120` left alone would still be there


def _stop_cluster(temp_dir: str) -> None:
    """Kill the processes of the Ray cluster whose temp folder is ``temp_dir`` (only those:
    ``ray stop`` would stop every Ray of the machine)."""
    import psutil

    ours = []
    for proc in psutil.process_iter(["cmdline"]):
        if proc.pid == os.getpid():
            continue
        if any(temp_dir in part for part in proc.info["cmdline"] or ()):
            try:  # its workers and agents rename themselves (ray::IDLE)
                ours += [proc, *proc.children(recursive=True)]
            except psutil.Error:
                pass
    for proc in ours:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(ours, timeout=15)


def test_a_cluster_started_with_ray_start_and_token_auth_is_joined(tmp_path: Path) -> None:
    """`ray start --head` turns token auth on when a token exists (~/.ray/auth_token, which
    any earlier local Ray writes); a driver given the address must then send it."""
    import shutil
    import subprocess
    import sys
    import tempfile

    pytest.importorskip("ray", reason="Ray is not installed (pip install 'mycode-batch[ray]')")
    from mycode_core.testing import cli_env

    user = tmp_path / "user"  # the HOME of the cluster's owner and of the batch
    user.mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # Ray's socket paths must be short
    ray_cli = str(Path(sys.executable).parent / "ray")
    env = cli_env(tmp_path / "home", {"HOME": str(user), "RAY_AUTH_MODE": None})
    try:
        subprocess.run(
            [ray_cli, "get-auth-token", "--generate"], env=env, check=True, capture_output=True
        )
        subprocess.run(
            [
                ray_cli,
                "start",
                "--head",
                f"--port={port}",
                "--num-cpus=1",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--temp-dir={temp_dir}",
            ],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        folder(tmp_path / "ws", {"a.txt": "a\n"})
        model = writer_script(tmp_path / "s.json", "n.txt", "n\n")
        tasks = write_tasks(tmp_path / "tasks.jsonl", [task("t", model=model)])
        run = run_batch(
            tasks,
            tmp_path / "out",
            tmp_path / "home",
            *BYPASS,
            *on_ray(f"127.0.0.1:{port}"),
            env={"HOME": str(user), "RAY_AUTH_MODE": None},
        )
        assert run.rc == 0, run.stderr
        assert results(tmp_path / "out")["t"]["stop_reason"] == "completed"
    finally:
        _stop_cluster(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
