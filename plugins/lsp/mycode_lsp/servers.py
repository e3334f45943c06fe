"""The language servers of one run: started on first use for a file they serve, kept in step
with the files (``didOpen`` / ``didChange`` with the whole text), stopped at the end of the run.

Diagnostics arrive on their own (``textDocument/publishDiagnostics``); :meth:`Servers.diagnostics`
sends a file's new text and waits, at most ``wait`` seconds, for the server to publish what it
finds in it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from mycode_lsp.client import LspClient, LspError
from mycode_lsp.specs import ServerSpec

MAX_FILE_BYTES = 4 * 1024 * 1024
"""A file larger than this is not sent to a server."""
_NONE: tuple[int, int | None, list[dict[str, Any]]] = (0, None, [])
MAX_STARTS = 4
"""A server that went away is started again on its next use, this many times in a run."""


def path_of(uri: str) -> Path:
    """The local path of a ``file://`` URI."""
    return Path(unquote(urlsplit(uri).path))


@dataclass
class _Document:
    version: int
    text: str


class Servers:
    """Every configured server of a run, by the file suffixes each serves."""

    def __init__(self, specs: list[ServerSpec], workspace: Path, logs: Path) -> None:
        self.specs = specs
        self.workspace = workspace
        self.logs = logs
        self.clients: dict[str, LspClient] = {}
        self.failed: dict[str, str] = {}
        self.starts: dict[str, int] = {}
        self._documents: dict[str, _Document] = {}
        self._published: dict[str, tuple[int, int | None, list[dict[str, Any]]]] = {}
        self._changed = threading.Condition()
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()

    def spec_for(self, path: Path) -> ServerSpec | None:
        """The first server that serves files like ``path``."""
        return next((s for s in self.specs if s.language_of(path.suffix)), None)

    def client_for(self, path: Path) -> tuple[LspClient, ServerSpec]:
        """The running server for ``path``, started now if need be (``LspError`` if none)."""
        spec = self.spec_for(path)
        if spec is None:
            served = sorted({suffix for s in self.specs for suffix in s.extensions})
            raise LspError(
                f"no language server for {path.suffix or path.name} files "
                f"(configured for: {', '.join(served) or 'none'})"
            )
        with self._lock:
            if spec.name in self.failed:
                raise LspError(self.failed[spec.name])
            client = self.clients.get(spec.name)
            if client is not None and client.alive:
                return client, spec
            log = self.logs / f"{spec.name}.log"
            self.starts[spec.name] = self.starts.get(spec.name, 0) + 1
            if self.starts[spec.name] > MAX_STARTS:
                self.failed[spec.name] = (
                    f"language server {spec.name} stopped {MAX_STARTS} times in this run; "
                    f"not started again (log: {log})"
                )
                raise LspError(self.failed[spec.name])
            client = LspClient(spec, self.workspace, log, self._notified)
            try:
                client.start()
            except LspError as exc:
                client.close(timeout=1.0)
                self.failed[spec.name] = f"language server {spec.name}: {exc} (log: {log})"
                raise LspError(self.failed[spec.name]) from None
            self.clients[spec.name] = client
            self._documents = {  # a (re)started server has none of its files open yet
                uri: doc
                for uri, doc in self._documents.items()
                if spec.language_of(path_of(uri).suffix) is None
            }
            return client, spec

    def sync(self, path: Path) -> tuple[LspClient, str]:
        """Send ``path``'s current text to its server (open it, or send the change)."""
        with self._sync_lock:  # parallel calls on one file: one didOpen, versions in order
            return self._sync(path)

    def _sync(self, path: Path) -> tuple[LspClient, str]:
        client, spec = self.client_for(path)
        uri = path.resolve().as_uri()
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise LspError(f"{path.name} is too large to send to a language server")
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise LspError(f"cannot read {path}: {exc.strerror or exc}") from None
        document = self._documents.get(uri)
        if document is None:
            language = spec.language_of(path.suffix) or "plaintext"
            item = {"uri": uri, "languageId": language, "version": 1, "text": text}
            client.notify("textDocument/didOpen", {"textDocument": item})
            self._documents[uri] = _Document(1, text)
        elif document.text != text:
            document.version += 1
            document.text = text
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": document.version},
                    "contentChanges": [{"text": text}],
                },
            )
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        return client, uri

    def _notified(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics" or not isinstance(params, dict):
            return
        uri = str(params.get("uri") or "")
        version = params.get("version")
        with self._changed:
            count = self._published.get(uri, _NONE)[0] + 1
            self._published[uri] = (
                count,
                version if isinstance(version, int) else None,
                list(params.get("diagnostics") or []),
            )
            self._changed.notify_all()

    def diagnostics(self, path: Path, wait: float) -> list[dict[str, Any]] | None:
        """Send ``path``'s text and return what its server then publishes for it (``None``
        when nothing came within ``wait`` seconds, or no server serves the file). A server
        that numbers its diagnostics (``version``) is waited for until it speaks of this text,
        not of an earlier one."""
        if self.spec_for(path) is None:
            return None
        uri = path.resolve().as_uri()
        with self._changed:
            before = self._published.get(uri, _NONE)[0]
        known = self._documents.get(uri)
        known_text = known.text if known is not None else None
        self.sync(path)
        document = self._documents.get(uri)
        wanted = document.version if document is not None else 0
        if document is not None and document.text == known_text:  # nothing new was sent
            with self._changed:
                return list(self._published[uri][2]) if uri in self._published else None

        def arrived() -> bool:
            count, version, _found = self._published.get(uri, _NONE)
            return count > before and (version is None or version >= wanted)

        with self._changed:
            if not self._changed.wait_for(arrived, timeout=wait):
                return None
            return list(self._published[uri][2])

    def close(self) -> None:
        """Stop every server started for the run."""
        for client in list(self.clients.values()):
            client.close()
        self.clients.clear()
