"""Putting one folder plugin in place (SPEC §11), in two steps so ``plugins update`` can ask
between them: :func:`stage_folder` fetches the plugin into a staging folder under
``$MYCODE_HOME/plugins/.staging`` and checks it there; :func:`place` renames it into
``$MYCODE_HOME/plugins/<name>/`` and records it in ``plugins.toml``. Whatever fails leaves
nothing behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.fetch import (
    FetchError,
    Source,
    contain_links,
    fetch,
    remove,
    staging_dir,
)
from mycode_claude_compat.folders import PluginFolder, data_dir, detect_format, read_folder
from mycode_claude_compat.registry import (
    content_hash,
    plugins_dir,
    read_registry,
    write_registry,
)

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
"""A plugin or marketplace name that can be a folder name."""


class InstallError(Exception):
    """Refused (exit 1): one readable line; ``report`` is a validate report when the plugin
    itself is invalid."""

    def __init__(self, message: str, report: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class Installed:
    """What one install did."""

    name: str
    kind: str
    detail: str


def report_of(folder: PluginFolder, staged: Path | None = None) -> dict[str, Any]:
    """The ``mycode plugins validate`` JSON of a read folder (``staged``: the temporary folder
    it was read from, whose paths the messages give relative to the plugin, since it is
    gone by the time anyone reads them)."""
    fatal = [p.as_json() for p in folder.fatal]
    warnings = [p.as_json() for p in folder.warnings]
    if folder.format != "agent-plugins":
        seen = {w["message"] for w in warnings}
        warnings += [
            {"message": p, "section": folder.format}
            for p in folder.problems
            if p not in seen and not p.startswith("rejected:")
        ]
    if staged is not None:
        prefixes = {f"{staged}{os.sep}", f"{os.path.realpath(staged)}{os.sep}"}
        for item in fatal + warnings:
            for prefix in prefixes:
                item["message"] = str(item["message"]).replace(prefix, "")
    return {"format": folder.format, "name": folder.name, "fatal": fatal, "warnings": warnings}


def stage(source: Source, home: Path, label: str | None = None) -> tuple[Path, Path, str | None]:
    """Fetch ``source`` into a new staging folder (``label``: how a refusal names it):
    ``(staging folder, fetched files, git revision or None)``."""
    staging = staging_dir(home)
    try:
        folder, rev = fetch(source, staging)
    except (FetchError, OSError) as exc:
        remove(staging)
        raise InstallError(f"cannot fetch {label or source.text()}: {exc}") from None
    return staging, folder, rev


def _checked(folder_path: Path, home: Path, what: str) -> PluginFolder:
    if detect_format(folder_path) is None:
        raise InstallError(
            f"{what} holds no plugin (no plugin.json, .codex-plugin/ or .claude-plugin/)"
        )
    folder = read_folder(folder_path, "installed", home)
    if folder.rejected:
        raise InstallError(f"{what} is not a valid plugin", report_of(folder, folder_path))
    problems = name_problems(folder)
    if problems:
        raise InstallError(f"{what}: {problems[0]['message']}")
    return folder


def name_problems(folder: PluginFolder) -> list[dict[str, str]]:
    """The ``fatal`` item of a name no install can use as its folder (``[]`` when it can)."""
    if SAFE_NAME.match(folder.name):
        return []
    message = f"the plugin name {folder.name!r} cannot be a folder name"
    return [{"message": message, "section": folder.format}]


def _with_manifest(folder: Path, manifest: str | None) -> None:
    """Write ``manifest`` as the folder's ``.claude-plugin/plugin.json`` if it has none."""
    target = folder / ".claude-plugin" / "plugin.json"
    if manifest is not None and not os.path.lexists(target):
        target.parent.mkdir(exist_ok=True)
        target.write_text(manifest, encoding="utf-8")


@dataclass
class Staged:
    """A fetched and checked plugin waiting in staging, and the record it will get."""

    folder: Path
    name: str
    format: str
    record: dict[str, Any]
    label: str
    """How messages name it (``NAME@MARKETPLACE``, a path, a URL)."""
    removed: list[str] = field(default_factory=list)
    """Symlinks left out because they led out of the plugin."""
    stages: list[Path] = field(default_factory=list)
    """The staging folders to remove once it is placed or given up."""

    @property
    def hash(self) -> str:
        """The content hash of its files."""
        return str(self.record["hash"])

    def discard(self) -> None:
        """Remove the staging folders."""
        for path in self.stages:
            remove(path)


def stage_folder(
    source: Source,
    home: Path,
    *,
    extra: dict[str, Any] | None = None,
    manifest: str | None = None,
    within: Path | None = None,
    label: str | None = None,
) -> Staged:
    """Fetch and check one folder plugin (``extra``: more fields for its record, where
    ``fetched_from`` replaces ``source``; ``manifest``: from a ``"strict": false`` marketplace
    entry; ``within``: the marketplace the plugin's symlinks may lead into,
    :func:`.fetch.contain_links`; ``label``: how messages name it)."""
    label = label or source.text()
    staging, fetched, rev = stage(source, home, label)
    try:
        origin = fetched if rev is not None else Path(source.location)
        removed = contain_links(fetched, origin, within or origin)
        _with_manifest(fetched, manifest)
        folder = _checked(fetched, home, label)
        fields = dict(extra or {})
        record = {
            "kind": "folder",
            "source": fields.pop("fetched_from", None) or source.location,
            "rev": rev,
            "pinned": bool(source.rev) or None,
            # the manifest is written into the folder, so a changed entry changes the hash too
            "hash": content_hash(fetched),
            "format": folder.format,
            "manifest": manifest,
            **fields,
        }
    except BaseException:
        remove(staging)
        raise
    return Staged(fetched, folder.name, folder.format, record, label, removed, [staging])


def stage_subdir(
    source: Source,
    subdir: str,
    home: Path,
    *,
    extra: dict[str, Any],
    manifest: str | None,
    label: str,
) -> Staged:
    """Fetch and check the plugin in the folder ``subdir`` of the git repository ``source``."""
    staging, fetched, rev = stage(source, home)
    try:
        inner = (fetched / subdir).resolve()
        if not inner.is_relative_to(fetched.resolve()) or not inner.is_dir():
            raise InstallError(f"{source.text()} holds no folder {subdir!r}")
        fields = {**extra, "subdir": subdir, "fetched_from": source.location, "rev": rev}
        fields["pinned"] = bool(source.rev) or None
        staged = stage_folder(
            Source(str(inner)), home, extra=fields, manifest=manifest, within=fetched, label=label
        )
    except BaseException:
        remove(staging)
        raise
    staged.stages.append(staging)
    return staged


def place(staged: Staged, home: Path, *, replace: bool = False) -> Installed:
    """Move a staged plugin into ``$MYCODE_HOME/plugins/<name>/`` and record it (``replace``:
    over the installed one; its ``PLUGIN_DATA`` is elsewhere and stays)."""
    try:
        target = plugins_dir(home) / staged.name
        records = read_registry(home)
        if (target.exists() or staged.name in records) and not replace:
            raise InstallError(
                f"a plugin named {staged.name!r} is already installed "
                f"(`mycode plugins update {staged.name}` or uninstall it first)"
            )
        if target.exists():
            os.replace(target, staged.stages[0] / ".old")
        os.replace(staged.folder, target)
        records[staged.name] = staged.record
        write_registry(home, records)
        data_dir(home, staged.name).mkdir(parents=True, exist_ok=True)
    finally:
        staged.discard()
    detail = f"{staged.hash[:19]} from {staged.label}"
    if staged.removed:
        detail += f"; left out {len(staged.removed)} symlink(s) leading out of the plugin: "
        detail += ", ".join(staged.removed)
    return Installed(staged.name, staged.format, detail)


def install_folder(source: Source, home: Path) -> Installed:
    """Fetch, check and place one folder plugin given by its path or URL."""
    return place(stage_folder(source, home), home)
