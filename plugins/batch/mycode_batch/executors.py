"""Where tasks run: a local pool of worker processes, or Ray tasks on a cluster.

Both take a task's :class:`~mycode_batch.worker.RunSpec` (as a dict), run
:func:`~mycode_batch.worker.run_task` and hand back its record as soon as it ends; the
coordinator decides what to submit and when. ``ray`` is imported only here, inside functions.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from mycode_batch.worker import run_task


class ExecutorError(Exception):
    """The executor could not start (e.g. an unreachable Ray address)."""


class Executor(Protocol):
    """What the coordinator needs from an executor."""

    name: str

    def submit(self, spec: dict[str, Any]) -> None:
        """Start one task."""

    def wait(self, timeout: float) -> list[dict[str, Any]]:
        """Records of tasks that ended, waiting up to ``timeout`` seconds for the first."""

    @property
    def running(self) -> int:
        """How many submitted tasks have not ended."""

    def cancel(self) -> None:
        """Stop every running task (their records say ``cancelled``)."""

    def close(self) -> None:
        """Release the pool or disconnect from Ray."""


def _failed(spec: dict[str, Any], reason: str, error: str, **extra: Any) -> dict[str, Any]:
    task = spec["task"]
    return {
        "id": task["id"],
        "stop_reason": reason,
        "verdict": "none",
        "steps": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "duration_ms": 0,
        "session_id": None,
        "patch": os.path.join(spec["out_dir"], "tasks", task["id"], "diff.patch"),
        "model": task.get("model"),
        "exit_code": None,
        "error": error,
        **extra,
    }


class LocalExecutor:
    """N concurrent workers on this machine; each task is its own ``mycode -p`` process."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self._pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch")
        self._futures: dict[cf.Future[dict[str, Any]], dict[str, Any]] = {}
        self._cancel = threading.Event()

    def submit(self, spec: dict[str, Any]) -> None:
        """Start one task on a free worker."""
        future = self._pool.submit(run_task, spec, self._cancel.is_set)
        self._futures[future] = spec

    def wait(self, timeout: float) -> list[dict[str, Any]]:
        """Records of the tasks that ended."""
        if not self._futures:
            time.sleep(min(timeout, 0.05))
            return []
        done, _ = cf.wait(list(self._futures), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        records = []
        for future in done:
            spec = self._futures.pop(future)
            try:
                records.append(future.result())
            except Exception as exc:  # noqa: BLE001 - a bug in one task costs that task only
                records.append(_failed(spec, "error", f"{type(exc).__name__}: {exc}"))
        return records

    @property
    def running(self) -> int:
        """Tasks submitted and not ended."""
        return len(self._futures)

    def cancel(self) -> None:
        """Kill the running tasks' processes."""
        self._cancel.set()

    def close(self) -> None:
        """Shut the pool down."""
        self._cancel.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


def cancel_marker(spec: dict[str, Any]) -> Path:
    """The file whose presence cancels a running Ray task (the output folder is shared)."""
    return Path(spec["out_dir"]) / ".batch-cancel" / str(spec["task"]["id"])


def _ray_entry(spec: dict[str, Any]) -> dict[str, Any]:
    """The body of a Ray task: a cold ``mycode -p``, the direct child of the Ray worker.

    It stops when its cancel marker appears, whether or not Ray's own interrupt reaches the
    worker (a cluster started with SIGINT ignored never raises it); no warm fork server here,
    as Ray starts fresh workers for every job.
    """
    marker = cancel_marker(spec)
    return run_task(spec, marker.exists, warm_start=False)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise :class:`ExecutorError` unless ``HOST:PORT`` accepts a TCP connection.

    ``auto`` and ``ray://`` client addresses are left to Ray itself.
    """
    if address == "auto" or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ExecutorError(f"--ray-address {address!r}: expected HOST:PORT")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ExecutorError(f"Ray cluster at {address} is unreachable: {exc}") from None


def send_ray_token(address: str | None) -> None:
    """Have the driver send Ray's auth token to an explicit ``address`` when one is at hand.

    ``ray start --head`` turns token auth on once a token exists (``~/.ray/auth_token``, which
    any local ``ray.init`` writes), but Ray sends it to a given address only with
    ``RAY_AUTH_MODE=token``; a cluster without auth accepts a driver that sends one.
    """
    if not address or "RAY_AUTH_MODE" in os.environ:
        return
    token_file = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray/auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or token_file.is_file():
        os.environ["RAY_AUTH_MODE"] = "token"


FORCE_CANCEL_AFTER = 15.0
"""Seconds a cancelled Ray task may take to stop its run before its worker is stopped."""


class RayExecutor:
    """Each task a Ray task with a resource request; a lost worker is retried once."""

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None,
        workers: int,
        num_cpus: float,
        resources: dict[str, float],
        memory_mb: int | None = None,
    ) -> None:
        # Under `uv run`, Ray's default hook would make every worker `uv run` again from an
        # uploaded copy of the current folder (re-resolving the environment, which hangs
        # offline); workers use the installed packages instead unless the user asks.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        send_ray_token(address)  # before the import: Ray reads its config once
        try:
            import ray
        except ImportError:
            raise ExecutorError(
                "--executor ray needs Ray: pip install 'mycode-batch[ray]'"
            ) from None
        self._ray = ray
        if address:
            check_reachable(address)
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": "ERROR",
            "configure_logging": True,
        }
        # a local Ray for this run is sized so that N tasks fit at once; its start is tried
        # twice (on a loaded machine the raylet can miss Ray's fixed 30 s start-up wait)
        attempts = 1 if address else 2
        for attempt in range(1, attempts + 1):
            try:
                if address:
                    ray.init(address=address, **options)
                else:
                    # "local": a new Ray even when RAY_ADDRESS or a `ray start` names another
                    cpus = max(1, int(workers * max(num_cpus, 0.01)) + 1)
                    ray.init(address="local", num_cpus=cpus, **options)
                break
            except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; name the address
                try:
                    ray.shutdown()
                except Exception:  # noqa: BLE001,S110 - nothing to stop
                    pass
                if attempt == attempts:
                    where = address or "a local Ray"
                    raise ExecutorError(f"could not start or join {where}: {exc}") from None
        remote_options: dict[str, Any] = {
            "num_cpus": num_cpus,
            "max_retries": 1,  # a worker lost mid-task: run it once more, then it failed
            "retry_exceptions": False,
        }
        if resources:
            remote_options["resources"] = resources
        if memory_mb:
            remote_options["memory"] = memory_mb * 1024 * 1024
        self._remote = ray.remote(**remote_options)(_ray_entry)
        self._refs: dict[Any, dict[str, Any]] = {}
        self._cancelled_at: float | None = None
        self._forced = False
        self._submitted: list[dict[str, Any]] = []

    def submit(self, spec: dict[str, Any]) -> None:
        """Submit one Ray task."""
        cancel_marker(spec).unlink(missing_ok=True)  # one left by an earlier, cut batch
        self._refs[self._remote.remote(spec)] = spec
        self._submitted.append(spec)

    def wait(self, timeout: float) -> list[dict[str, Any]]:
        """Records of the Ray tasks that ended (streamed as they finish)."""
        ray = self._ray
        if not self._refs:
            time.sleep(min(timeout, 0.05))
            return []
        self._force_overdue_cancels()
        done, _ = ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        records = []
        for ref in done:
            spec = self._refs.pop(ref)
            try:
                records.append(ray.get(ref))
            except ray.exceptions.TaskCancelledError:
                records.append(_failed(spec, "cancelled", "cancelled"))
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
                if self._cancelled_at is not None:  # a worker we stopped by force
                    records.append(_failed(spec, "cancelled", "cancelled"))
                    continue
                message = str(exc).strip().splitlines()[0] if str(exc).strip() else "lost"
                records.append(
                    _failed(spec, "worker_lost", f"worker lost twice: {message}", attempts=2)
                )
            except Exception as exc:  # noqa: BLE001 - one task's failure costs that task
                if self._cancelled_at is not None:  # stopped by the cancel, however Ray says it
                    records.append(_failed(spec, "cancelled", "cancelled"))
                    continue
                text = str(exc).strip().splitlines()
                records.append(_failed(spec, "error", text[-1] if text else type(exc).__name__))
        return records

    @property
    def running(self) -> int:
        """Ray tasks submitted and not ended."""
        return len(self._refs)

    def cancel(self) -> None:
        """Cancel the running Ray tasks (each kills its ``mycode`` process tree).

        A task still running :data:`FORCE_CANCEL_AFTER` seconds later has its worker stopped
        by Ray (``force=True``); the run's processes die with it (``PR_SET_PDEATHSIG``)."""
        self._cancelled_at = time.monotonic()
        for ref, spec in list(self._refs.items()):
            marker = cancel_marker(spec)
            try:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.touch()
            except OSError:
                pass
            try:
                self._ray.cancel(ref)
            except Exception:  # noqa: BLE001,S110 - already finished
                pass

    def _force_overdue_cancels(self) -> None:
        if self._cancelled_at is None or self._forced:
            return
        if time.monotonic() - self._cancelled_at < FORCE_CANCEL_AFTER:
            return
        self._forced = True
        for ref in list(self._refs):
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001,S110 - already finished
                pass

    def close(self) -> None:
        """Disconnect (and stop the local Ray started for the run)."""
        for folder in {cancel_marker(spec).parent for spec in self._submitted}:
            shutil.rmtree(folder, ignore_errors=True)
        try:
            self._ray.shutdown()
        except Exception:  # noqa: BLE001,S110 - best effort at exit
            pass
