"""The coordinator: what to run, when to stop, and the files at the end.

It hands at most ``workers`` tasks at a time to the executor, appends each record to
``results.jsonl`` as it arrives, and stops scheduling on the first Ctrl-C or when
``--max-total-tokens`` is reached; a second Ctrl-C, SIGTERM or SIGHUP cancels the running
tasks (cancelled tasks are not recorded, so ``--resume`` runs them again). ``preds.json`` is
kept current as tasks end; it and ``report.html`` are rewritten from the records at the end,
whatever happened.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from mycode_batch.executors import Executor
from mycode_batch.outputs import (
    append_result,
    drop_bad_lines,
    load_results,
    totals,
    write_preds,
)
from mycode_batch.progress import Progress
from mycode_batch.report import write_report
from mycode_batch.tasks import Task
from mycode_batch.worker import RunSpec

EXIT_OK, EXIT_INCOMPLETE = 0, 1


@dataclass
class BatchOptions:
    """The coordinator's settings."""

    out: Path
    workers: int
    resume: bool = False
    retry_failed: bool = False
    max_total_tokens: int | None = None
    model: str | None = None
    spec_template: dict[str, Any] = field(default_factory=dict)
    """:class:`RunSpec` fields shared by every task (flags, env, timeout, ...)."""
    invalid: list[str] = field(default_factory=list)
    """Lines of the task file skipped with ``--skip-invalid`` (each ``path:line: what``):
    listed in the summary; they do not count against the exit code."""


@dataclass
class BatchOutcome:
    """What the run did, for the summary and the exit code."""

    records: list[dict[str, Any]]
    ran: int
    not_run: list[str]
    interrupted: bool
    budget_reached: bool
    exit_code: int


class _Interrupts:
    """Ctrl-C once: stop scheduling; twice: cancel the running tasks. SIGTERM or SIGHUP (a
    ``kill``, ``timeout``, a CI job cancelled, the terminal closed) does both at once, as
    ``mycode -p`` ends its run on them.

    The handler only counts; :meth:`act` (called by the scheduling loop, which wakes at least
    every 0.2 s) does the rest, so nothing is printed or locked inside the signal handler.
    """

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self, on_first: Callable[[str], None], on_second: Callable[[str], None]) -> None:
        self.count = 0
        self.signum: int | None = None
        self._acted = 0
        self._on_first, self._on_second = on_first, on_second
        self._previous: dict[int, Any] = {}

    @property
    def name(self) -> str:
        """How the user stopped the batch: ``Ctrl-C`` or the signal's name."""
        if self.signum in (None, signal.SIGINT):
            return "Ctrl-C"
        return signal.Signals(self.signum).name

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum
        self.count += 1 if signum == signal.SIGINT else 2

    def act(self) -> None:
        """Run the reactions to the signals received since the last call (each once)."""
        while self._acted < min(self.count, 2):
            self._acted += 1
            (self._on_first if self._acted == 1 else self._on_second)(self.name)

    def exit_code(self) -> int:
        """130 after Ctrl-C, else 128 + the signal (143 for SIGTERM), as for ``mycode -p``."""
        return 128 + (self.signum or signal.SIGINT)

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            # a signal ignored when the batch started (`nohup`, a script's `cmd &`) stays so
            if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()


PREDS_EVERY = 5.0
"""Seconds between rewrites of ``preds.json`` while tasks end (it is rewritten whole)."""


class _PredsKeeper:
    """Keeps ``preds.json`` current while the batch runs, so it holds what ended even when the
    batch is killed (as mini-swe-agent keeps it): rewritten at most every
    :data:`PREDS_EVERY` seconds, the last change at the latest that long after it."""

    def __init__(self, out: Path, recorded: dict[str, dict[str, Any]], model: str | None):
        self.out, self.recorded, self.model = out, recorded, model
        self.dirty = False
        self.last = 0.0

    def changed(self) -> None:
        """A task was recorded."""
        self.dirty = True
        self.flush()

    def flush(self) -> None:
        """Rewrite the file if it is behind and was not rewritten a moment ago."""
        now = time.monotonic()
        if self.dirty and (not self.last or now - self.last >= PREDS_EVERY):
            write_preds(self.out, list(self.recorded.values()), self.model)
            self.dirty, self.last = False, now


def run_batch(
    tasks: list[Task],
    options: BatchOptions,
    executor_factory: Callable[[], Executor],
    progress: Progress,
) -> BatchOutcome:
    """Run every task not yet recorded; write results, predictions and the report.

    The executor is made first: when it cannot start (``ExecutorError``) no file is touched.
    """
    executor = executor_factory()
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    recorded = load_results(results_path) if options.resume else {}
    if options.resume:
        drop_bad_lines(results_path)
    if not options.resume and results_path.exists():
        results_path.unlink()
    if options.retry_failed:
        recorded = {k: r for k, r in recorded.items() if r.get("stop_reason") == "completed"}
    queue = [t for t in tasks if t.id not in recorded]
    state = {"stopping": False, "budget": False}

    def stop_scheduling(name: str) -> None:
        state["stopping"] = True
        if name == "Ctrl-C":
            progress.note("Ctrl-C: no new tasks; running ones finish (Ctrl-C again cancels them)")

    cancel_requested = {"done": False}

    def cancel_running(name: str) -> None:
        cancel_requested["done"] = True
        again = " again" if name == "Ctrl-C" else ""
        progress.note(f"{name}{again}: cancelling the running tasks")

    progress.begin(
        len(queue), len(tasks) - len(queue), {"executor": executor.name, "out": str(out)}
    )
    used_tokens = int(totals(list(recorded.values()))["total_tokens"])
    ran = 0
    preds = _PredsKeeper(out, recorded, options.model)
    interrupts = _Interrupts(stop_scheduling, cancel_running)
    try:
        with interrupts:
            pending = list(queue)
            cancelled_sent = False
            while pending or executor.running:
                interrupts.act()
                while pending and not state["stopping"] and executor.running < options.workers:
                    task = pending.pop(0)
                    spec = RunSpec(task=task.to_dict(), out_dir=str(out), **options.spec_template)
                    executor.submit(spec.to_dict())
                    progress.task_start(task.id)
                if cancel_requested["done"] and not cancelled_sent:
                    executor.cancel()
                    cancelled_sent = True
                if state["stopping"] and not executor.running:
                    break
                preds.flush()
                for record in executor.wait(0.2):
                    if record.get("stop_reason") == "cancelled":
                        progress.running.pop(record["id"], None)
                        continue  # not recorded: --resume runs it again
                    append_result(results_path, record)
                    recorded[record["id"]] = record
                    ran += 1
                    preds.changed()
                    progress.task_end(record)
                    used_tokens += int((record.get("usage") or {}).get("input_tokens") or 0)
                    used_tokens += int((record.get("usage") or {}).get("output_tokens") or 0)
                    budget = options.max_total_tokens
                    if budget is not None and used_tokens >= budget and not state["budget"]:
                        state["budget"] = state["stopping"] = True
                        progress.note(
                            f"--max-total-tokens {budget} reached ({used_tokens}): "
                            "no new tasks are started"
                        )
    finally:
        executor.close()
    by_id = {t.id: t for t in tasks}
    records = [recorded[t.id] for t in tasks if t.id in recorded]
    records += [r for k, r in recorded.items() if k not in by_id]
    not_run = [t.id for t in tasks if t.id not in recorded]
    write_preds(out, records, options.model)
    write_report(out, records, not_run)
    interrupted = interrupts.count > 0
    if interrupted:
        code = interrupts.exit_code()
    elif not_run or any(r.get("stop_reason") != "completed" for r in records):
        code = EXIT_INCOMPLETE
    else:
        code = EXIT_OK
    summary = {**totals(records), "not_run": not_run, "invalid": options.invalid}
    progress.end({**summary, "exit_code": code})
    return BatchOutcome(records, ran, not_run, interrupted, bool(state["budget"]), code)
