"""Progress of a batch: a rich live display on a terminal, plain lines when piped, or
``stream-json`` events (one per task start and end) on stdout."""

from __future__ import annotations

import json
import sys
import time
from typing import IO, Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text


def _why(record: dict[str, Any]) -> str:
    """`` — the error`` of a task that failed before or outside its run, else nothing."""
    return f" — {record['error']}" if record.get("error") else ""


def _tokens(record: dict[str, Any]) -> int:
    usage = record.get("usage") or {}
    return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


class Progress:
    """Counts shared by every display; subclasses show them."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.running: dict[str, float] = {}
        self.started = time.monotonic()
        self._durations: list[float] = []

    def begin(self, total: int, already: int, info: dict[str, Any]) -> None:
        """The batch starts: ``total`` tasks to run now, ``already`` recorded earlier."""
        self.total = total
        self.started = time.monotonic()

    def task_start(self, task_id: str) -> None:
        """A task was handed to a worker."""
        self.running[task_id] = time.monotonic()

    def task_end(self, record: dict[str, Any]) -> None:
        """A task ended (``record`` as written to results.jsonl)."""
        began = self.running.pop(record["id"], None)
        if began is not None:
            self._durations.append(time.monotonic() - began)
        self.done += 1
        if record.get("stop_reason") != "completed":
            self.failed += 1
        self.tokens += _tokens(record)

    def note(self, message: str) -> None:
        """Something the user should know (Ctrl-C, budget reached)."""

    def end(self, summary: dict[str, Any]) -> None:
        """The batch ended."""

    def eta(self) -> float | None:
        """Seconds left, from the pace so far."""
        if not self.done or self.done >= self.total:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


class PlainProgress(Progress):
    """One line per event on stderr (for logs and pipes)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.stream = stream or sys.stderr

    def _say(self, text: str) -> None:
        print(f"batch: {text}", file=self.stream, flush=True)

    def begin(self, total: int, already: int, info: dict[str, Any]) -> None:
        """Say how many tasks will run."""
        super().begin(total, already, info)
        extra = f" ({already} already recorded)" if already else ""
        self._say(f"{total} tasks to run on {info.get('executor')}{extra}")

    def task_start(self, task_id: str) -> None:
        """Say a task started."""
        super().task_start(task_id)
        self._say(f"start {task_id}")

    def task_end(self, record: dict[str, Any]) -> None:
        """Say how a task ended, with the counts so far."""
        super().task_end(record)
        self._say(
            f"end {record['id']}: {record.get('stop_reason')} verdict={record.get('verdict')} "
            f"steps={record.get('steps')} tokens={_tokens(record)} "
            f"[{self.done}/{self.total} done, {self.failed} failed, eta {_clock(self.eta())}]"
            + _why(record)
        )

    def note(self, message: str) -> None:
        """Print the note."""
        self._say(message)


class RichProgress(Progress):
    """A live panel on the terminal: done/running/failed, tokens, elapsed, ETA."""

    def __init__(self, console: Console | None = None) -> None:
        super().__init__()
        self.console = console or Console(stderr=True)
        self._live = Live(console=self.console, refresh_per_second=4, transient=True)
        self._live.update(self)  # type: ignore[arg-type]  # rendered through __rich__

    def __rich__(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        elapsed = time.monotonic() - self.started
        grid.add_row(
            Text(f"done {self.done}/{self.total}", style="bold"),
            Text(f"running {len(self.running)}", style="cyan"),
            Text(f"failed {self.failed}", style="red" if self.failed else "dim"),
            Text(f"tokens {self.tokens:,}"),
            Text(f"elapsed {_clock(elapsed)}"),
            Text(f"eta {_clock(self.eta())}"),
        )
        now = time.monotonic()
        for task_id, began in list(self.running.items())[:8]:
            grid.add_row(Text(f"  {task_id}", style="cyan"), Text(_clock(now - began)))
        return grid

    def begin(self, total: int, already: int, info: dict[str, Any]) -> None:
        """Start the live display."""
        super().begin(total, already, info)
        self._live.start()

    def task_end(self, record: dict[str, Any]) -> None:
        """Print the ended task above the live panel."""
        super().task_end(record)
        style = "green" if record.get("stop_reason") == "completed" else "red"
        self.console.print(
            f"[{style}]{record['id']}[/] {record.get('stop_reason')} "
            f"({record.get('verdict')}, {record.get('steps')} steps){escape(_why(record))}"
        )

    def note(self, message: str) -> None:
        """Print a note above the panel."""
        self.console.print(f"[yellow]{message}[/]")

    def end(self, summary: dict[str, Any]) -> None:
        """Stop the live display."""
        self._live.stop()


class JsonProgress(Progress):
    """``stream-json``: one event per line on stdout."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.stream = stream or sys.stdout

    def _emit(self, event: dict[str, Any]) -> None:
        self.stream.write(json.dumps(event, ensure_ascii=False) + "\n")
        self.stream.flush()

    def begin(self, total: int, already: int, info: dict[str, Any]) -> None:
        """Emit ``batch_start``."""
        super().begin(total, already, info)
        self._emit({"type": "batch_start", "tasks": total, "already_recorded": already, **info})

    def task_start(self, task_id: str) -> None:
        """Emit ``task_start``."""
        super().task_start(task_id)
        self._emit({"type": "task_start", "id": task_id, "time": time.time()})

    def task_end(self, record: dict[str, Any]) -> None:
        """Emit ``task_end`` with the task's record."""
        super().task_end(record)
        self._emit({"type": "task_end", **record})

    def note(self, message: str) -> None:
        """Emit a ``notice``."""
        self._emit({"type": "notice", "level": "warning", "message": message})

    def end(self, summary: dict[str, Any]) -> None:
        """Emit ``batch_result`` last."""
        self._emit({"type": "batch_result", **summary})


def make_progress(output_format: str) -> Progress:
    """The display for ``--output-format`` and whether stderr is a terminal."""
    if output_format == "stream-json":
        return JsonProgress()
    if sys.stderr.isatty():
        return RichProgress()
    return PlainProgress()
