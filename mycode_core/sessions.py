"""Session transcripts: every event appended to a JSONL file under ``MYCODE_HOME/sessions``,
one flushed line each, so a crash loses at most that line (a cut last line is skipped)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mycode_core.events import AgentEvent

# what mycode adds to a prompt (hook reminders, inlined ``@path`` files): not the user's
_ADDED_BLOCKS = re.compile(r"\s*<(system-reminder|mentioned-file)\b[^>]*>.*?</\1>\s*", re.DOTALL)


def user_words(content: str) -> str:
    """A stored prompt without the blocks mycode added to it: the user's own words."""
    return _ADDED_BLOCKS.sub("\n\n", content).strip()


def is_session_id(text: str) -> bool:
    """Whether ``text`` can name a session: one file name of ``MYCODE_HOME/sessions``, no path
    (a user's ``--resume``, ``/resume`` or ``sessions show`` id becomes file names)."""
    return text not in ("", ".", "..") and not set(text) & set("/\\\0")


def new_session_id() -> str:
    """A sortable, unique id: UTC time plus random hex."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass
class SessionInfo:
    """Summary of one stored session."""

    id: str
    cwd: str
    model: str
    started: float
    stop_reason: str | None
    first_prompt: str  # as the user typed it (its ``typed`` event, else :func:`user_words`)
    steps: int = 0  # of every run of the session


class Transcript:
    """An open transcript file; ``write`` appends and flushes one event."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: IO[str] | None = path.open("a", encoding="utf-8")
        if path.stat().st_size > 0:  # a crash may have cut the last line: start on a new one
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self._fh.write("\n")

    def write(self, event: AgentEvent) -> None:
        """Append one event as a JSON line and flush it."""
        if self._fh is None:
            return
        try:
            self._fh.write(event.to_json() + "\n")
            self._fh.flush()
        except OSError as exc:  # a full MYCODE_HOME is one line, not a traceback
            fh, self._fh = self._fh, None
            with contextlib.suppress(OSError):
                fh.close()
            print(
                f"mycode: error: cannot write the transcript in {self.path.parent}: "
                f"{exc.strerror or exc} (errno {exc.errno}); the run goes on without it",
                file=sys.stderr,
            )

    def close(self) -> None:
        """Make the file durable (fdatasync) and close it: the process may leave at once after."""
        if self._fh is not None:
            with contextlib.suppress(OSError, ValueError):
                self._fh.flush()
                getattr(os, "fdatasync", os.fsync)(self._fh.fileno())
            self._fh.close()
            self._fh = None


class SessionStore:
    """Where transcripts live: ``<home>/sessions/<id>.jsonl``."""

    def __init__(self, home: Path) -> None:
        self.root = home / "sessions"

    def path_for(self, session_id: str) -> Path:
        """The transcript path of a session id."""
        return self.root / f"{session_id}.jsonl"

    def open(self, session_id: str) -> Transcript:
        """Open (create or append to) a transcript."""
        return Transcript(self.path_for(session_id))

    def read_events(self, session_id: str) -> list[dict[str, Any]]:
        """All readable events of a session; a truncated or corrupt line is skipped."""
        path = self.path_for(session_id)
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return [data for data in json_objects(fh) if "type" in data]

    def exists(self, session_id: str) -> bool:
        """Whether ``session_id`` is a session id (:func:`is_session_id`) with a transcript."""
        return is_session_id(session_id) and self.path_for(session_id).is_file()

    def list(self, cwd: str | None = None) -> list[SessionInfo]:
        """Stored sessions with a prompt, newest first; only workspace ``cwd``'s if given."""
        if not self.root.is_dir():
            return []
        infos = [info for path in self.root.glob("*.jsonl") if (info := self._info(path))]
        found = [info for info in infos if info.first_prompt and (cwd is None or info.cwd == cwd)]
        return sorted(found, key=lambda info: (info.started, info.id), reverse=True)

    def latest(self, cwd: str) -> SessionInfo | None:
        """The most recent conversation of a workspace (``--continue``)."""
        return next(iter(self.list(cwd)), None)

    def _info(self, path: Path) -> SessionInfo | None:
        system: dict[str, Any] | None = None
        prompt, typed, stop, steps = "", "", None, 0
        try:
            events = self.read_events(path.stem)
        except OSError:
            return None
        for event in events:
            kind = event.get("type")
            if event.get("agent_id"):  # a child agent's event
                continue
            if kind == "system" and system is None:
                system = event
            elif kind == "typed":  # what the user typed for the turn's ``user`` (``/greet Marie``)
                typed = str(event.get("text", ""))
            elif kind == "user" and not prompt:
                prompt = typed or user_words(str(event.get("content", "")))
            elif kind == "result":
                stop, typed = event.get("stop_reason"), ""
                steps += count if isinstance(count := event.get("steps"), int) else 0
        if system is None:
            return None
        return SessionInfo(
            id=path.stem,
            cwd=str(system.get("cwd", "")),
            model=str(system.get("model", "")),
            started=ts if isinstance(ts := system.get("ts"), float | int) else path.stat().st_mtime,
            stop_reason=stop,
            first_prompt=prompt,
            steps=steps,
        )


def json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of JSON Lines text (a transcript, ``--output-format stream-json``):
    blank, cut or corrupt lines and lines that hold no object are skipped."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            yield data
