"""Recording one session's turns: the content a call is about to change, captured before it runs.

* A tool that declares the paths it writes (``write_file``, ``edit_file``, a plugin's
  ``WritePath``) has those files copied aside in ``permission_verdict``, before it runs.
* A file the session has read or written is kept in a small content cache, so a command
  (``run_command``) that later changes it can be undone too.
* A command changing a file mycode never saw: inside git its content in the index as it was
  before the call is taken. That index is kept aside before every call that may write (a hard
  link to ``.git/index``: git replaces the index by renaming a new file over it, so the link
  keeps the old entries, at the cost of one ``link``; a copy when ``MYCODE_HOME`` is on another
  filesystem); its blobs stay in ``.git/objects`` and are read with ``git cat-file`` through
  :mod:`mycode_core.safegit`, read-only. Outside git such a file cannot be restored and the
  checkpoint says so.

After the call, the observation's ``mutated`` paths (the core's change detection: tools,
commands and plugin tools alike) decide which captured contents are kept.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from mycode_checkpoints import store
from mycode_checkpoints.settings import with_ignored

CACHE_FILE_MAX = 1 << 20
LISTING_MAX = 20_000
"""Beyond this many files a workspace is not listed before a command (then the core's
``created`` is taken as it is): the listing costs about 5 ms per 1,000 files, paid by every
command, and this bounds it near 100 ms."""
CACHE_TOTAL_MAX = 64 << 20
DIFF_MAX = 1 << 20

_RECORDERS: dict[tuple[str, str], Recorder] = {}
_LOCK = threading.Lock()


def recorder_for(context: Any) -> Recorder:
    """The recorder of the context's session (children of a run share their parent's)."""
    key = (str(context.home), str(context.session_id))
    with _LOCK:
        found = _RECORDERS.get(key)
        if found is None:
            found = _RECORDERS[key] = Recorder(context)
        return found


def _inside_git_dir(rel: str) -> bool:
    return rel == ".git" or rel.startswith(".git/") or "/.git/" in rel


class Recorder:
    """What one session's current turn changed, and what it was before."""

    def __init__(self, context: Any) -> None:
        self.home = Path(context.home)
        self.workspace = Path(context.workspace).resolve()
        self.session_id = str(context.session_id)
        self.settings, self.ignored = with_ignored(context.settings)
        """... and the notices of the project's settings not taken (shown once)."""
        self.turn: store.TurnRecord | None = None
        self.pending: dict[str, dict[str, tuple[str, int, int] | None]] = {}
        self.existing: dict[str, set[str] | None] = {}
        """Per call of a tool that declares no path it writes: the files (and folders, with a
        trailing ``/``) before it ran."""
        self.new_dirs: dict[str, dict[str, list[str]]] = {}
        self.links: dict[str, dict[str, str]] = {}
        """Per call of a tool that declares no path it writes: the symlinks before it ran and
        where each pointed (undo puts back a link a command deleted or re-pointed)."""
        """Per call, per file a tool is about to create: the folders it creates for it."""
        self.indexes: dict[str, Path] = {}
        """Per call that may write in a git work tree: the git index kept as it was before it
        (a path that does not exist: there was no index)."""
        self.seen: OrderedDict[str, bytes | None] = OrderedDict()
        self.modes: dict[str, int] = {}
        """The permission bits of each cached file when its content was cached."""
        self._seen_bytes = 0
        self.lock = threading.RLock()
        self._total: int | None = None
        self._counted: dict[Path, set[str]] = {}
        self._fresh = True
        self.running: set[str] = set()
        """Calls of this run noted as running (see :func:`store.mark_running`)."""

    # ----------------------------------------------------------------- turns

    def start_turn(self, prompt: str) -> None:
        """A new user turn begins."""
        for call_id in list(self.running):  # refused calls of the turn before
            self.call_ended(call_id)
        with self.lock:
            number = store.next_turn(self.home, self.session_id, self.workspace)
            self.turn = store.TurnRecord(self.home, self.session_id, number, prompt, self.workspace)
            # the cache as the files are now: edits by hand between turns, and in a resumed
            # session the files its earlier turns changed
            known = list(self.seen)
            if number > 1 and self._fresh:
                known += [f["path"] for t in store.load_turns(self.home, self.session_id)
                          for f in t["files"]]  # fmt: skip
            self._fresh = False
            for rel in dict.fromkeys(known):
                self._remember(rel)

    def _current(self, prompt: str) -> store.TurnRecord:
        if self.turn is None:
            self.start_turn(prompt)
        assert self.turn is not None
        return self.turn

    def _rel(self, path: Path) -> str | None:
        try:
            return Path(os.path.abspath(path)).relative_to(self.workspace).as_posix()
        except ValueError:
            return None

    def call_ended(self, call_id: str) -> None:
        """A call ran to its end or was refused: it was not cut short."""
        self.running.discard(call_id)
        store.mark_running(self.home, self.session_id, call_id, None)
        index = self.indexes.pop(call_id, None)
        if index is not None:
            with contextlib.suppress(OSError):
                index.unlink()

    # ----------------------------------------------------------------- before a call

    def before_call(self, call: Any, tool: Any) -> None:
        """Copy aside the files the call declares it writes; cache the ones it reads."""
        if not self.settings.enabled or tool is None:
            return
        roles = dict(getattr(tool, "paths", {}) or {})
        if not getattr(tool, "read_only", False):
            turn = self.turn.meta["turn"] if self.turn else None
            args = " ".join(str(v) for v in (getattr(call, "arguments", None) or {}).values())
            what = f"{call.name}({args[:80]}) of turn {turn or '?'}"
            store.mark_running(self.home, self.session_id, call.id, what, turn)
            self.running.add(call.id)
            self._keep_index(call.id)
            if "write" not in roles.values():
                with self.lock:
                    self.links[call.id] = {}
                    self.existing[call.id] = _listing(self.workspace, self.links[call.id])
        for param, path in (getattr(call, "paths", {}) or {}).items():
            rel = self._rel(Path(path))
            if rel is None or _inside_git_dir(rel):
                continue
            if roles.get(param) == "write":
                self._capture(call.id, rel)
            else:
                self._remember(rel)

    def _keep_index(self, call_id: str) -> None:
        """In a git work tree, keep its index as it is before the call (see the module doc)."""
        from mycode_core import safegit

        try:
            repo = safegit.find_repository(self.workspace)
        except safegit.SafeGitError:
            return
        if repo is None:
            return
        kept = self.home / "checkpoints" / ".pending" / self.session_id / "indexes"
        kept = kept / call_id.replace("/", "_")
        kept.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            kept.unlink()
        source = repo.git_dir / "index"
        try:
            os.link(source, kept, follow_symlinks=False)
        except FileNotFoundError:
            pass  # no index: nothing was staged
        except OSError:  # another filesystem (or no hard links there): a copy
            opened = store.open_regular(source)
            if opened is not None:
                with opened as src, open(kept, "wb") as out:
                    shutil.copyfileobj(src, out)
        if kept.is_symlink():  # .git/index was a symlink: not an index we read
            kept.unlink()
        self.indexes[call_id] = kept

    def _capture(self, call_id: str, rel: str) -> None:
        with self.lock:
            turn = self.turn
            if turn is not None and turn.entry(rel) is not None:
                return  # the turn already holds this file's content before it
            pending_dir = self.home / "checkpoints" / ".pending" / self.session_id
            name = f"{call_id}-{len(self.pending.get(call_id, {}))}".replace("/", "_")
            source = self.workspace / rel
            copied = store.copy_in(source, pending_dir, name) if source.exists() else None
            if not os.path.lexists(source):
                missing = [d for d in _folders(rel) if not (self.workspace / d).is_dir()]
                self.new_dirs.setdefault(call_id, {})[rel] = missing
            mode = 0
            if copied is not None:
                with contextlib.suppress(OSError):
                    mode = os.stat(source).st_mode & 0o7777
                os.replace(pending_dir / name, pending_dir / copied[0])
            entry = None if copied is None else (copied[0], copied[1], mode)
            self.pending.setdefault(call_id, {})[rel] = entry

    def _remember(self, rel: str) -> None:
        """Keep a small file's current content (or its absence) in the cache."""
        path = self.workspace / rel
        if not os.path.lexists(path):
            self._keep(rel, None)
            return
        opened = store.open_regular(path)  # a symlink, folder, FIFO or device is not read
        if opened is None:
            return
        try:
            with opened as fh:
                data = fh.read(CACHE_FILE_MAX + 1)
                self.modes[rel] = os.fstat(fh.fileno()).st_mode & 0o7777
        except OSError:
            return
        if len(data) > CACHE_FILE_MAX:
            with self.lock:
                self._seen_bytes -= len(self.seen.pop(rel, None) or b"")
            return
        self._keep(rel, data)

    def _keep(self, rel: str, data: bytes | None) -> None:
        """Cache ``data`` as the current content of ``rel`` (None: the file is absent)."""
        with self.lock:
            old = self.seen.pop(rel, None)
            self._seen_bytes -= len(old or b"")
            self.seen[rel] = data
            self._seen_bytes += len(data or b"")
            while self._seen_bytes > CACHE_TOTAL_MAX and self.seen:
                _, dropped = self.seen.popitem(last=False)
                self._seen_bytes -= len(dropped or b"")

    # ----------------------------------------------------------------- after a call

    def after_call(self, call: Any, observation: Any, prompt: str) -> list[str]:
        """Keep what the call's changed files were before it, and note how they are now.
        Returns a line for each file changed for the first time this turn that undo cannot
        restore (too large to keep, never seen before a command changed it)."""
        index = self.indexes.pop(call.id, None)
        try:
            return self._after_call(call, observation, prompt, index)
        finally:
            if index is not None:
                with contextlib.suppress(OSError):
                    index.unlink()

    def _after_call(
        self, call: Any, observation: Any, prompt: str, index: Path | None
    ) -> list[str]:
        self.call_ended(call.id)
        captured = self.pending.pop(call.id, {})
        existing = self.existing.pop(call.id, None)
        links = self.links.pop(call.id, {})
        new_dirs = self.new_dirs.pop(call.id, {})
        if not self.settings.enabled:
            return []
        mutated = [str(p) for p in (getattr(observation, "mutated", None) or [])]
        created = set(getattr(observation, "created", None) or [])
        if existing is not None:  # a file renamed over (sed -i, an atomic save) was there
            created -= existing
        folders = _new_folders(existing, created)
        lost = []
        with self.lock:
            turn = self._current(prompt) if mutated or folders else self.turn
            if folders and turn is not None:  # undo removes them when left empty
                turn.add_folders(folders)
            stored = False
            for rel in mutated:
                if rel.endswith("/") or _inside_git_dir(rel) or turn is None:
                    continue
                known = turn.entry(rel) is not None
                stored |= self._record_file(turn, rel, captured, created, index, links)
                item = turn.entry(rel)
                if (
                    not known
                    and item
                    and item["change"] != "created"
                    and not (item.get("blob") or "link" in item)
                ):
                    lost.append(f"checkpoints: undo cannot restore {rel}: {item.get('note')}")
                if not known and item and item["change"] == "created":
                    dirs = new_dirs.get(rel) if existing is None else [
                        d for d in _folders(rel) if d + "/" not in existing]  # fmt: skip
                    if dirs:  # folders made for it: undo removes them when left empty
                        turn.add({**item, "dirs": dirs})
            self._drop_pending(captured)
            if stored and turn is not None:
                self._bound(turn)
        return lost

    def _bound(self, turn: store.TurnRecord) -> None:
        """Keep all checkpoints within ``max_mb``: the folders are measured once per session,
        then the sizes of the blobs added are counted; over the bound, oldest turns go."""
        max_bytes = int(self.settings.max_mb * 1024 * 1024)
        blobs = turn.blob_dir()
        names = {p.name for p in blobs.iterdir()} if blobs.is_dir() else set()
        added = sum((blobs / n).stat().st_size for n in names - self._counted.get(turn.dir, set()))
        self._counted[turn.dir] = names
        if self._total is not None:
            self._total += added + 1024  # metadata, roughly
        if self._total is None or self._total > max_bytes:
            store.enforce_limit(self.home, max_bytes, keep=turn.dir)
            self._total = store.total_size(self.home)

    def _drop_pending(self, captured: dict[str, tuple[str, int, int] | None]) -> None:
        pending_dir = self.home / "checkpoints" / ".pending" / self.session_id
        for entry in captured.values():
            if entry is not None:
                with contextlib.suppress(OSError):
                    (pending_dir / entry[0]).unlink()

    def _record_file(
        self,
        turn: store.TurnRecord,
        rel: str,
        captured: dict[str, tuple[str, int, int] | None],
        created: set[str],
        index: Path | None,
        links: dict[str, str],
    ) -> bool:
        """Add or update ``rel`` in the turn; True when a previous content was stored
        (``index``: the git index as it was before the call, if kept)."""
        now = self.workspace / rel
        exists = now.exists() or now.is_symlink()
        item = turn.entry(rel)
        stored = False
        if item is None:
            item, stored = self._before(turn, rel, captured, created, index, links)
        if item["change"] == "created" and not exists:
            turn.meta["files"] = [f for f in turn.meta["files"] if f["path"] != rel]
            turn.save()  # created and removed again within the turn: nothing to undo
            return stored
        if item["change"] != "created":
            item["change"] = "modified" if exists else "deleted"
        data = _read_small(now) if exists else b""
        if data is not None:
            self._keep(rel, data if exists else None)
            with contextlib.suppress(OSError):
                self.modes[rel] = os.stat(now).st_mode & 0o7777
        if not exists:
            item["after"] = None
        elif data is not None:
            item["after"] = hashlib.sha256(data).hexdigest()
        else:
            item["after"] = store.hash_file(now)
        item["added"], item["removed"] = self._line_counts(turn, item, data)
        turn.add(item)
        return stored

    def _before(
        self,
        turn: store.TurnRecord,
        rel: str,
        captured: dict[str, tuple[str, int, int] | None],
        created: set[str],
        index: Path | None,
        links: dict[str, str],
    ) -> tuple[dict[str, Any], bool]:
        """The entry of a file the turn changes for the first time: its content before (for
        a symlink, where it pointed)."""
        item: dict[str, Any] = {"path": rel, "change": "modified", "blob": None, "mode": None}
        if rel in links:
            item["link"] = links[rel]
            return item, False
        pending_dir = self.home / "checkpoints" / ".pending" / self.session_id
        if rel in captured:
            entry = captured.pop(rel)
            if entry is None:
                item["change"] = "created"
                return item, False
            digest, size, mode = entry
            blobs = turn.blob_dir()
            blobs.mkdir(parents=True, exist_ok=True)
            if size > self.settings.max_mb * 1024 * 1024:
                big = f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB"
                limit = f"[checkpoints] max_mb = {self.settings.max_mb:g}"
                item["note"] = f"too large to keep ({big}, over {limit})"
                return item, False
            os.replace(pending_dir / digest, blobs / digest)
            item.update(blob=digest, mode=mode, size=size)
            return item, True
        if rel in self.seen:
            data = self.seen[rel]
            if data is None:
                item["change"] = "created"
                return item, False
            return self._store_bytes(turn, item, data, self.modes.get(rel)), True
        if rel in created:
            item["change"] = "created"
            return item, False
        staged = self._from_git(rel, index)
        if staged is not None:
            item["note"] = "content before taken from the git index (as staged before the call)"
            return self._store_bytes(turn, item, *staged), True
        item["note"] = "never seen by mycode before a command changed it: cannot be restored"
        return item, False

    def _store_bytes(
        self, turn: store.TurnRecord, item: dict[str, Any], data: bytes, mode: int | None
    ) -> Any:
        """Keep ``data`` as the item's content before, with its permission bits ``mode``
        (undo gives a deleted or chmod-ed script its executable bit back)."""
        digest = hashlib.sha256(data).hexdigest()
        blobs = turn.blob_dir()
        blobs.mkdir(parents=True, exist_ok=True)
        (blobs / digest).write_bytes(data)
        item.update(blob=digest, mode=mode, size=len(data))
        return item

    def _from_git(self, rel: str, index: Path | None) -> tuple[bytes, int | None] | None:
        """The file's content and mode in ``index``, the git index kept before the call
        (read-only; git keeps only the executable bit: 0o755 or 0o644); None outside git,
        without an index or untracked. The live index is never read: a command may have
        staged or committed its own change already."""
        if index is None or not index.is_file():
            return None
        entry = self._git(["ls-files", "--stage", "-z", "--", f":(literal){rel}"], index)
        fields = entry.split(b" ", 2) if entry else []
        if len(fields) < 3 or fields[0] not in (b"100644", b"100755"):
            return None  # untracked, a symlink or a submodule: no content to write back
        data = self._git(["cat-file", "blob", fields[1].decode()], index)
        mode: int | None = 0o755 if fields[0] == b"100755" else 0o644
        with contextlib.suppress(OSError):  # still there, its x bit as staged: keep its bits
            if bool(os.stat(self.workspace / rel).st_mode & 0o100) == (mode == 0o755):
                mode = None  # (a 0o600 file stays private)
        return None if data is None else (data, mode)

    def _git(self, args: list[str], index: Path) -> bytes | None:
        """The output of a read-only ``git ARGS`` against the kept ``index``; None on failure."""
        from mycode_core import safegit

        try:
            done = safegit.run(args, self.workspace, root=self.workspace,
                               env={"GIT_INDEX_FILE": str(index)}, timeout=10)  # fmt: skip
        except (OSError, safegit.SafeGitError, Exception):  # noqa: BLE001
            return None
        out = done.stdout
        return out if done.returncode == 0 and isinstance(out, bytes) else None

    def _line_counts(
        self, turn: store.TurnRecord, item: dict[str, Any], new: bytes | None
    ) -> tuple[int | None, int | None]:
        """Lines added and removed by the turn (None for binary or big files)."""
        old = b""
        if item.get("blob"):
            path = turn.blob_dir() / item["blob"]
            if path.stat().st_size > DIFF_MAX:
                return None, None
            old = path.read_bytes()
        elif item["change"] != "created":
            return None, None
        if new is None or b"\0" in old or b"\0" in new:
            return None, None
        try:
            a, b = old.decode().splitlines(), new.decode().splitlines()
        except UnicodeDecodeError:
            return None, None
        added = removed = 0
        for line in difflib.unified_diff(a, b, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed


def refresh_after_undo(context: Any, done: list[str]) -> None:
    """After an undo put files back (``done``: its ``restored PATH`` / ``removed PATH``
    lines), the session's cache holds their restored content, not what the undone turns left."""
    found = _RECORDERS.get((str(context.home), str(context.session_id)))
    if found is None:
        return
    for line in done:  # a full path: another workspace's file (then not in this one's cache)
        rel = found._rel(found.workspace / line.partition(" ")[2])
        if rel is not None:
            found._remember(rel)


def _listing(workspace: Path, links: dict[str, str] | None = None) -> set[str] | None:
    """The workspace's files (noise folders and ``.git`` skipped, no link followed), None when
    there are more than :data:`LISTING_MAX`; each symlink's target goes into ``links``."""
    from mycode_core.api import BUILD_DIRS, NOISE_DIRS

    skipped = NOISE_DIRS | BUILD_DIRS | {".git"}
    found: set[str] = set()
    stack = [str(workspace)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            rel = os.path.relpath(entry.path, workspace).replace(os.sep, "/")
            if is_dir:
                if entry.name not in skipped:
                    stack.append(entry.path)
                    found.add(rel + "/")
                continue
            found.add(rel)
            if links is not None and entry.is_symlink():
                with contextlib.suppress(OSError):
                    links[rel] = os.readlink(entry.path)
            if len(found) > LISTING_MAX:
                return None
    return found


def _new_folders(existing: set[str] | None, created: set[str]) -> list[str]:
    """The folders a command made (``mkdir -p a/b && touch a/b/c``): those above the files it
    created that the listing before it did not hold (none when the workspace was too big to
    list). A new folder left empty is not seen: finding it would list the whole workspace a
    second time on every command, and it holds nothing to lose."""
    if existing is None:
        return []
    above = {folder for rel in created for folder in _folders(rel)}
    return sorted(folder for folder in above if f"{folder}/" not in existing)


def _folders(rel: str) -> list[str]:
    """The folders above a workspace path, outermost first (``a/b/c.txt``: ``a``, ``a/b``)."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes when small enough to cache, else None."""
    opened = store.open_regular(path)
    if opened is None:
        return None
    with opened as fh:
        data = fh.read(CACHE_FILE_MAX + 1)
    return data if len(data) <= CACHE_FILE_MAX else None


def cleanup(context: Any) -> None:
    """Forget a finished session's recorder and its leftovers."""
    key = (str(context.home), str(context.session_id))
    with _LOCK:
        found = _RECORDERS.pop(key, None)
    if found is not None:
        for call_id in list(found.running):
            found.call_ended(call_id)
        shutil.rmtree(
            found.home / "checkpoints" / ".pending" / found.session_id, ignore_errors=True
        )
