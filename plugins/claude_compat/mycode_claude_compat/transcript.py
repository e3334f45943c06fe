"""The ``transcript_path`` file: the session so far as Claude Code writes it, one JSON object
a line (``type`` ``user``/``assistant``, ``message`` with ``role`` and ``content`` blocks
``text``/``tool_use``/``tool_result``, plus ``sessionId``, ``uuid``, ``parentUuid``,
``timestamp``, ``cwd``). Tool names are Claude Code's. Written under ``MYCODE_HOME``, and
synchronously at the points hooks run, so a hook always sees what happened before it: lines
are queued as things happen and the queue is written out just before any hook runs (and when
the session ends), so runs whose hooks all miss pay no file I/O.
"""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mycode_claude_compat.names import cc_input, cc_name, cc_response, claude_json


class Transcript:
    """Appends Claude Code style lines to one file."""

    def __init__(
        self, path: Path, session_id: str, workspace: Path, agent_id: str | None = None
    ) -> None:
        self.path = path
        self._marks: dict[str, Any] = {}
        if agent_id is not None:  # a subagent's lines, marked as Claude Code marks them
            self._marks = {"isSidechain": True, "agentId": agent_id}
        self.session_id = session_id
        self.workspace = workspace
        self._parent: str | None = None
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.broken = False
        self.enabled = True
        """Off when no hook is configured: nobody would read the file."""
        self._pending: list[dict[str, Any]] = []

    def _write(self, kind: str, content: Any, **extra: Any) -> None:
        """Queue one line; :meth:`flush` writes the queue (before any hook runs)."""
        if not self.enabled:
            return
        with self._lock:
            line_id = uuid.uuid4().hex
            self._pending.append(
                {
                    "type": kind,
                    "message": {"role": kind, "content": content},
                    "sessionId": self.session_id,
                    "uuid": line_id,
                    "parentUuid": self._parent,
                    "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                    "cwd": str(self.workspace),
                    **self._marks,
                    **extra,
                }
            )
            self._parent = line_id

    def flush(self) -> None:
        """Append the queued lines to the file."""
        with self._lock:
            if not self._pending or self.broken:
                self._pending.clear()
                return
            text = "".join(claude_json(record) + "\n" for record in self._pending)
            self._pending.clear()
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError:
                self.broken = True

    def touch(self) -> None:
        """Create the file (empty) so ``transcript_path`` always exists."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch(exist_ok=True)
        except OSError:
            self.broken = True

    def user(self, text: str) -> None:
        """A user prompt."""
        self._write("user", text)

    def tool_use(self, call: Any) -> None:
        """The assistant's tool call (once per call id)."""
        if call.id in self._seen:
            return
        self._seen.add(call.id)
        block = {
            "type": "tool_use",
            "id": call.id,
            "name": cc_name(call.name),
            "input": cc_input(call.name, call.arguments, self.workspace),
        }
        self._write("assistant", [block])

    def tool_result(self, call: Any, result: Any) -> None:
        """The result of a tool call."""
        text = result.text() if hasattr(result, "text") else str(result.content)
        block = {
            "type": "tool_result",
            "tool_use_id": call.id,
            "content": text,
            "is_error": bool(result.is_error),
        }
        response = cc_response(call.name, call.arguments, result, self.workspace)
        self._write("user", [block], toolUseResult=response)

    def assistant_text(self, text: str) -> None:
        """A final answer."""
        self._write("assistant", [{"type": "text", "text": text}])
