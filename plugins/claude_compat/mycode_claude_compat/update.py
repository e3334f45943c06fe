"""``mycode plugins update`` (SPEC §11): fetch an installed folder plugin again, show the hash
change, and put it in place once the user agrees; ``PLUGIN_DATA`` is elsewhere and stays.

A plugin installed from a marketplace is fetched as its marketplace entry says *now*: the same
way as installing it (:func:`.marketplaces.stage_entry`), so an entry whose ``source`` moved —
to another folder of the marketplace, or to a git repository — is followed, and a
``"strict": false`` entry's manifest is read again. Only when the marketplace cannot be fetched
at all is the recorded source fetched instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mycode_claude_compat.fetch import Source
from mycode_claude_compat.marketplaces import Markets, MarketUnreachable, stage_entry
from mycode_claude_compat.placing import (
    InstallError,
    Staged,
    place,
    stage_folder,
    stage_subdir,
)
from mycode_claude_compat.registry import read_registry, write_registry

_WHERE = ("source", "subdir")
"""The record fields that say where the plugin's files come from."""


@dataclass
class Refetched:
    """A plugin fetched again, waiting in staging."""

    staged: Staged
    old: str
    """The recorded hash."""
    moved: str | None
    """Where the files come from now, when that changed (its marketplace entry moved)."""
    note: str | None = None
    """A remark for the user (the marketplace could not be read, the recorded source was)."""

    @property
    def new(self) -> str:
        """The hash of the fetched files."""
        return self.staged.hash


def _recorded_source(record: dict[str, Any], home: Path, label: str) -> Staged:
    """Fetch the plugin from where its record says it came from."""
    rev = record.get("rev") if record.get("pinned") else None
    source = Source(str(record["source"]), rev if isinstance(rev, str) else None)
    manifest = record.get("manifest") if isinstance(record.get("manifest"), str) else None
    keys = ("marketplace", "marketplace_entry")
    extra: dict[str, Any] = {key: record[key] for key in keys if key in record}
    subdir = record.get("subdir")
    if isinstance(subdir, str):
        return stage_subdir(source, subdir, home, extra=extra, manifest=manifest, label=label)
    return stage_folder(source, home, extra=extra, manifest=manifest, label=label)


def _where(record: dict[str, Any]) -> str:
    subdir = record.get("subdir")
    return f"{record.get('source')}" + (f" ({subdir})" if subdir else "")


def refetch(name: str, home: Path, markets: Markets) -> Refetched:
    """Fetch the installed folder plugin ``name`` again into staging (from its marketplace's
    entry as it is now, when it came from one)."""
    record = read_registry(home).get(name)
    if record is None or record.get("kind") == "python":
        raise InstallError(f"no installed folder plugin named {name!r}")
    market, entry = record.get("marketplace"), record.get("marketplace_entry")
    staged: Staged | None = None
    note = None
    if isinstance(market, str) and isinstance(entry, str):
        try:
            staged = stage_entry(entry, market, home, markets, market)
        except MarketUnreachable as exc:
            note = f"{exc}; fetched the recorded source instead"
    if staged is None:
        staged = _recorded_source(record, home, str(record.get("source")))
    if staged.name != name:
        staged.discard()
        raise InstallError(f"{staged.label} now holds a plugin named {staged.name!r}")
    changed = any(staged.record.get(key) != record.get(key) for key in _WHERE)
    moved = _where(staged.record) if changed else None
    return Refetched(staged, str(record.get("hash")), moved, note)


def apply_update(home: Path, update: Refetched) -> None:
    """Swap the fetched folder in (``PLUGIN_DATA`` stays) and record where it came from."""
    place(update.staged, home, replace=True)


def keep_files(name: str, home: Path, update: Refetched) -> None:
    """The files are unchanged: drop the fetched copy, but record where they come from now."""
    update.staged.discard()
    records = read_registry(home)
    now = {key: value for key, value in update.staged.record.items() if value is not None}
    if name in records and records[name] != now:
        records[name] = now
        write_registry(home, records)
