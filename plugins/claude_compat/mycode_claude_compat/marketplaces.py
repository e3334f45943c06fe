"""Marketplaces: by name, their files and entries, each fetched once per command.

``mycode plugins marketplace add SOURCE`` (a folder, a git repository or URL, or GitHub's
``owner/repo``) records the marketplace under the ``name`` its ``marketplace.json`` gives, in
``$MYCODE_HOME/marketplaces.json``; ``NAME@MARKETPLACE`` then takes that name. Claude Code's own
``claude-plugins-official`` is known without adding it, and ``NAME@owner/repo`` reads the
GitHub repository. A local path always means itself.

An entry's plugin is a folder of the marketplace, or of another git repository
(:func:`entry_source`); :func:`stage_entry` fetches and checks it the same way for ``install``
and for ``update``, which so follows an entry whose ``source`` moved. One command reads each
marketplace once, through one :class:`Markets`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from mycode_claude_compat.fetch import Source, remove, split_rev
from mycode_claude_compat.placing import (
    SAFE_NAME,
    Installed,
    InstallError,
    Staged,
    place,
    stage,
    stage_folder,
    stage_subdir,
)
from mycode_core.api import replace_atomically

KNOWN = {"claude-plugins-official": "https://github.com/anthropics/claude-plugins-official.git"}
"""Marketplaces Claude Code knows without being told."""
_GITHUB = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+\Z")
FILE = "marketplaces.json"
MARKETPLACE_FILES = (".claude-plugin/marketplace.json", ".agents/plugins/marketplace.json")
"""Where a folder or repository keeps its marketplace (Claude Code's, then Codex's)."""


def recorded(home: Path) -> dict[str, str]:
    """The added marketplaces, name → source (``{}`` when none or unreadable)."""
    try:
        data = json.loads((home / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write(home: Path, table: dict[str, str]) -> None:
    text = json.dumps(table, indent=2, sort_keys=True) + "\n"
    replace_atomically(home / FILE, text.encode(), create_parents=True, follow_folder_links=True)


def github_source(text: str) -> str:
    """``owner/repo`` as its GitHub URL when no such local path exists; else ``text``."""
    base, sep, rev = text.partition("#")
    if _GITHUB.match(base) and not Path(base).expanduser().exists():
        return f"https://github.com/{base}.git{sep}{rev}"
    return text


def resolve(market: str, home: Path) -> str:
    """Where the marketplace ``market`` (a path, URL, added or known name, ``owner/repo``) is."""
    base, sep, rev = market.partition("#")
    if Path(base).expanduser().exists():
        return market
    named = recorded(home).get(base) or KNOWN.get(base)
    if named is not None:
        return f"{named}{sep}{rev}" if sep else named
    return github_source(market)


def record(home: Path, name: str, source: str) -> None:
    """Remember ``name`` → ``source``."""
    table = recorded(home)
    table[name] = source
    _write(home, table)


def forget(home: Path, name: str) -> bool:
    """Forget an added marketplace; False when it was not added."""
    table = recorded(home)
    if table.pop(name, None) is None:
        return False
    _write(home, table)
    return True


def market_file(root: Path) -> tuple[Path, dict[str, Any]]:
    """The marketplace file of the folder ``root`` and its data; refused when there is none
    or it has no ``plugins`` list."""
    for relative in MARKETPLACE_FILES:
        path = root / relative
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InstallError(f"{relative} is not valid JSON: {exc}") from None
            if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
                raise InstallError(f"{relative} has no 'plugins' list")
            return path, data
    raise InstallError(f"no marketplace there (looked for {', '.join(MARKETPLACE_FILES)})")


class MarketUnreachable(InstallError):
    """The marketplace could not be fetched at all (as opposed to fetched and found wanting)."""


@dataclass(frozen=True)
class Market:
    """One fetched marketplace."""

    source: Source
    root: Path
    """Its files, in staging."""
    rev: str | None
    """The commit it was cloned at; ``None`` for a plain folder (copied)."""
    data: dict[str, Any]


class Markets:
    """The marketplaces one command reads, each fetched once (a clone per marketplace, not
    per plugin); leaving the ``with`` block removes their copies."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._found: dict[str, Market | InstallError] = {}
        self._stages: list[Path] = []

    def get(self, where: str) -> Market:
        """The marketplace at ``where`` (a path or URL, ``#REV`` pinned), fetched on first use."""
        source = split_rev(where)
        key = source.text()
        if key not in self._found:
            self._found[key] = self._fetch(source)
        found = self._found[key]
        if isinstance(found, InstallError):
            raise found
        return found

    def _fetch(self, source: Source) -> Market | InstallError:
        try:
            staging, root, rev = stage(source, self.home)
        except InstallError as exc:
            return MarketUnreachable(str(exc))
        self._stages.append(staging)
        try:
            _path, data = market_file(root)
        except InstallError as exc:
            return exc
        return Market(source, root, rev, data)

    def close(self) -> None:
        """Remove every marketplace copy."""
        for path in self._stages:
            remove(path)
        self._stages.clear()
        self._found.clear()

    def __enter__(self) -> Markets:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def add_marketplace(source_text: str, home: Path) -> tuple[str, str, int]:
    """Fetch a marketplace, check it and record it by its name: ``(name, source, plugins)``."""
    resolved = github_source(source_text)
    local = Path(resolved.partition("#")[0]).expanduser()
    if local.exists():
        resolved = str(local.resolve())
    with Markets(home) as markets:
        data = markets.get(resolved).data
    name = data.get("name")
    if not isinstance(name, str) or not SAFE_NAME.match(name):
        raise InstallError(f"{source_text}: the marketplace has no usable name ({name!r})")
    record(home, name, resolved)
    return name, resolved, len(data["plugins"])


_ENTRY_MANIFEST = (
    *("name", "version", "description", "author"),
    *("skills", "commands", "agents", "hooks", "mcpServers", "lspServers"),
)


def entry_manifest(entry: dict[str, Any]) -> str | None:
    """A ``"strict": false`` marketplace entry is the plugin's manifest (Claude Code's rule: its
    folder needs no ``plugin.json``): the entry's manifest fields as JSON, else ``None``.
    ``"strict": false`` stays in it: the skills such an entry lists are the plugin's only
    ones (entries sharing one repository each pick theirs from its ``skills/``)."""
    if entry.get("strict") is not False:
        return None
    fields = {key: entry[key] for key in _ENTRY_MANIFEST if key in entry}
    return json.dumps({**fields, "strict": False})


def entry_source(
    entry: dict[str, Any], market_root: Path, data: dict[str, Any]
) -> tuple[Source, str | None]:
    """Where a marketplace entry's plugin is: a folder inside the marketplace, or a git URL
    and the folder inside that repository (``{"source": "git-subdir", "url", "path"}``;
    ``""`` for its root). A ``sha`` pins the commit over a ``ref``."""
    raw = entry.get("source")
    rev = None
    subdir: str | None = None
    if isinstance(raw, dict):
        rev = raw.get("sha") or raw.get("ref") or raw.get("rev")
        inner = raw.get("path") if isinstance(raw.get("path"), str) else None
        if raw.get("repo") and not raw.get("url"):
            raw, subdir = f"https://github.com/{raw['repo']}.git", inner or ""
        elif raw.get("url"):
            raw, subdir = raw.get("url"), inner or ""
        else:
            raw = inner
    if not isinstance(raw, str) or not raw.strip():
        kind = entry["source"].get("source") if isinstance(entry.get("source"), dict) else None
        if isinstance(kind, str) and kind not in ("github", "url", "git-subdir", "local"):
            raise InstallError(
                f"marketplace entry {entry.get('name')!r} comes from a source of type {kind!r}, "
                "which mycode does not install (folders and git repositories only)"
            )
        raise InstallError(f"marketplace entry {entry.get('name')!r} has no usable 'source'")
    if Source(raw).is_url:
        return Source(raw, rev if isinstance(rev, str) else None), subdir or None
    prefix = ""
    meta = data.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("pluginRoot"), str) and "/" not in raw[:2]:
        prefix = meta["pluginRoot"]
    path = (market_root / prefix / raw).resolve()
    if not path.is_relative_to(market_root.resolve()):
        raise InstallError(f"marketplace entry {entry.get('name')!r} leads outside the marketplace")
    return Source(str(path), rev if isinstance(rev, str) else None), None


def find_entry(data: dict[str, Any], name: str, market: str) -> tuple[dict[str, Any], str | None]:
    """The entry ``name`` of a marketplace, following its ``renames`` (old name → new name,
    as Claude Code does): ``(entry, the name asked for when it was renamed)``."""
    entries = [e for e in data["plugins"] if isinstance(e, dict)]
    renames = data.get("renames")
    renames = renames if isinstance(renames, dict) else {}
    wanted, seen = name, {name}
    while True:
        found = [e for e in entries if e.get("name") == wanted]
        if len(found) > 1:
            raise InstallError(
                f"marketplace {market} lists {wanted!r} {len(found)} times; not guessing which"
            )
        if found:
            return found[0], (name if wanted != name else None)
        following = renames.get(wanted)
        if not isinstance(following, str) or following in seen:
            break
        wanted = following
        seen.add(wanted)
    known = sorted({str(e.get("name")) for e in entries})
    if len(known) <= 12:
        listing = f"it lists: {', '.join(known) or 'nothing'}"
    else:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        listing = f"it lists {len(known)} plugins" + (
            f"; did you mean {', '.join(close)}?" if close else ""
        )
    raise InstallError(f"marketplace {market} has no plugin named {name!r} ({listing})")


def refuse_unavailable(entry: dict[str, Any], market: str) -> None:
    """Codex's ``"policy": {"installation": "NOT_AVAILABLE"}``: listed, not installable (as
    Codex refuses it; ``AVAILABLE`` and ``INSTALLED_BY_DEFAULT`` install)."""
    policy = entry.get("policy")
    if isinstance(policy, dict) and policy.get("installation") == "NOT_AVAILABLE":
        raise InstallError(
            f"marketplace {market} lists {entry.get('name')!r} as not available for install "
            '("policy": {"installation": "NOT_AVAILABLE"})'
        )


def stage_entry(name: str, market: str, home: Path, markets: Markets, label: str) -> Staged:
    """Fetch and check the plugin the entry ``name`` of the marketplace at ``market`` (a
    resolved path or URL) names now — for ``install``, and for ``update``, which so follows an
    entry whose ``source`` moved (``label``: how messages name the marketplace)."""
    found = markets.get(market)
    entry, renamed = find_entry(found.data, name, label)
    refuse_unavailable(entry, label)
    plugin_source, subdir = entry_source(entry, found.root, found.data)
    manifest = entry_manifest(entry)
    name = str(entry["name"])
    extra: dict[str, Any] = {"marketplace": found.source.text(), "marketplace_entry": name}
    what = f"{name}@{label}" + (f" (renamed from {renamed})" if renamed else "")
    if subdir is not None:
        return stage_subdir(plugin_source, subdir, home, extra=extra, manifest=manifest, label=what)
    within = None
    if not plugin_source.is_url:
        relative = Path(plugin_source.location).relative_to(found.root.resolve())
        if found.rev is None:  # a plain marketplace folder: the plugin's own folder is its source
            within = Path(found.source.location)
            plugin_source = Source(str(within / relative), plugin_source.rev)
        else:  # inside a cloned marketplace: update clones the marketplace again
            extra.update(subdir=str(relative), fetched_from=found.source.location, rev=found.rev)
            within = found.root
    return stage_folder(
        plugin_source, home, extra=extra, manifest=manifest, within=within, label=what
    )


def install_from_marketplace(name: str, market: str, home: Path, markets: Markets) -> Installed:
    """``NAME@MARKETPLACE``: find NAME in the marketplace's list and install it (MARKETPLACE:
    a path or URL, an added or known name, or ``owner/repo``)."""
    return place(stage_entry(name, resolve(market, home), home, markets, market), home)
