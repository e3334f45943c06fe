"""Installed folder plugins: ``$MYCODE_HOME/plugins/<name>/`` and ``$MYCODE_HOME/plugins.toml``.

Each installed plugin has a table ``[plugins.<name>]`` with ``source``, ``rev``, ``hash``,
``format`` (and ``kind = "folder"``; Python distributions have ``kind = "python"`` and a
``requirement``). The hash covers every file of the folder (relative path, mode, content; a
symlink by its target), so a changed folder is noticed. Checking it at every start-up reads
every file once per run unless :func:`checked_hash` finds the files' status unchanged since the
last check (as git's index does: a changed file always gets a new change time, which no
program can set back).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import tomllib
from pathlib import Path
from typing import Any

from mycode_core.api import replace_atomically

REGISTRY = "plugins.toml"
HASH_CACHE = ("cache", "folder-plugin-hashes.json")
"""Under ``MYCODE_HOME``: each installed folder's last hash with its files' status."""
RACY_SECONDS = 2.0
"""A folder with a file changed this recently is hashed again next time (its change could
share a clock tick with the hash's reading)."""
_SKIP_DIRS = {".git"}


def plugins_dir(home: Path) -> Path:
    """Where installed folder plugins live."""
    return home / "plugins"


def registry_file(home: Path) -> Path:
    """``$MYCODE_HOME/plugins.toml``."""
    return home / REGISTRY


def read_registry(home: Path) -> dict[str, dict[str, Any]]:
    """The recorded plugins by name (``{}`` when there is no registry or it is unreadable)."""
    try:
        data = tomllib.loads(registry_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    table = data.get("plugins")
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(v, dict)}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def write_registry(home: Path, entries: dict[str, dict[str, Any]]) -> None:
    """Write the registry atomically (a temporary file renamed over the old one)."""
    lines = ["# Plugins installed with `mycode plugins install` (edit with mycode).", ""]
    for name in sorted(entries):
        lines.append(f"[plugins.{json.dumps(name)}]")
        for key in sorted(entries[name]):
            value = entries[name][key]
            if value is not None:
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    text = "\n".join(lines).encode("utf-8")
    replace_atomically(registry_file(home), text, create_parents=True, follow_folder_links=True)


def content_hash(root: Path) -> str:
    """``sha256:HEX`` of the folder's files (``.git`` left out), in a stable order."""
    digest = hashlib.sha256()
    for rel, path in _walk(root):
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        if os.path.islink(path):
            digest.update(b"L" + os.readlink(path).encode("utf-8", "surrogateescape") + b"\0")
            continue
        st = os.stat(path)
        digest.update(b"X" if st.st_mode & 0o111 else b"F")
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 16), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def _walk(root: Path) -> list[tuple[str, str]]:
    """``(relative path, absolute path)`` of every entry :func:`content_hash` reads, in its
    order (``.git`` left out, a symlink to a folder as an entry)."""
    found: list[tuple[str, str]] = []
    base = str(root)
    for current, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel_dir = os.path.relpath(current, base)
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(current, d))]):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            found.append((rel, os.path.join(current, name)))
    return found


def _status(root: Path) -> tuple[str, float]:
    """A digest of every file's status (name, inode, size, mode, modification and change
    times) and the newest change time among them."""
    digest, newest = hashlib.sha256(), 0.0
    for rel, path in _walk(root):
        st = os.lstat(path)
        fields = (rel, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)
        digest.update(repr(fields).encode("utf-8", "surrogateescape"))
        newest = max(newest, st.st_ctime)
    return digest.hexdigest(), newest


def checked_hash(root: Path, home: Path) -> str:
    """:func:`content_hash` of an installed folder, read again only when a file's status
    changed since the last check (remembered under ``MYCODE_HOME``, see :data:`HASH_CACHE`)."""
    try:
        status, newest = _status(root)
    except OSError:
        return content_hash(root)
    file = home.joinpath(*HASH_CACHE)
    try:
        cache = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    cache = cache if isinstance(cache, dict) else {}
    seen = cache.get(str(root))
    if isinstance(seen, dict) and seen.get("status") == status and seen.get("hash"):
        return str(seen["hash"])
    digest = content_hash(root)
    if newest < time.time() - RACY_SECONDS:
        cache[str(root)] = {"status": status, "hash": digest}
        try:
            data = json.dumps(cache).encode()
            replace_atomically(file, data, 0o600, create_parents=True, follow_folder_links=True)
        except OSError:
            pass  # no cache: the next run reads the files again
    return digest


def installed_folders(home: Path) -> list[tuple[Path, dict[str, Any] | None]]:
    """``(folder, record or None)`` for every folder under ``$MYCODE_HOME/plugins/`` (files —
    single-module plugins — and dot folders such as the staging area are not folder plugins)."""
    base = plugins_dir(home)
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    records = read_registry(home) if entries else {}
    out = []
    for entry in entries:
        if entry.name.startswith((".", "_")) or not entry.is_dir(follow_symlinks=False):
            continue
        out.append((Path(entry.path), records.get(entry.name)))
    return out
