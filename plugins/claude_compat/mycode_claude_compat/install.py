"""``mycode plugins install/uninstall/update/trust`` (SPEC §11): one verb for every kind.

A folder plugin is fetched into a staging folder under ``$MYCODE_HOME/plugins/.staging``,
validated there, then renamed into ``$MYCODE_HOME/plugins/<name>/`` and recorded in
``plugins.toml``; whatever fails leaves nothing behind. A Python distribution goes into the
interpreter mycode runs from (``uv pip install --python sys.executable`` when uv is on PATH,
else ``sys.executable -m pip install``).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mycode_claude_compat.fetch import (
    FetchError,
    Source,
    contain_links,
    fetch,
    is_git_repository,
    remove,
    split_rev,
    staging_dir,
)
from mycode_claude_compat.folders import PluginFolder, data_dir, detect_format, read_folder
from mycode_claude_compat.registry import (
    content_hash,
    plugins_dir,
    read_registry,
    write_registry,
)

MARKETPLACE_FILES = (".claude-plugin/marketplace.json", ".agents/plugins/marketplace.json")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MARKET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)@(.+)$")


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


def validate(root: Path, home: Path) -> dict[str, Any] | None:
    """The validate report of ``root``, or ``None`` when it holds no plugin."""
    if not root.is_dir() or detect_format(root) is None:
        return None
    return report_of(read_folder(root, "cli", home))


def _is_marketplace(spec: str) -> re.Match[str] | None:
    if spec.startswith("git@") or "://" in spec.split("@", 1)[0]:
        return None
    return _MARKET.match(spec)


def _is_python(spec: str) -> bool:
    path = Path(spec.partition("#")[0]).expanduser()
    if spec.endswith(".whl"):
        return True
    if path.is_dir():
        return (path / "pyproject.toml").is_file() and detect_format(path) is None
    looks_like_path = spec.startswith((".", "/", "~")) or os.sep in spec or "://" in spec
    return not looks_like_path and "@" not in spec and not path.exists()


def install(specs: list[str], home: Path) -> list[Installed]:
    """Install each SPEC in order; raises :class:`InstallError` at the first refusal (the
    ones before it stay installed)."""
    done = []
    for spec in specs:
        market = _is_marketplace(spec)
        if market is not None:
            done.append(install_from_marketplace(market.group(1), market.group(2), home))
        elif _is_python(spec):
            done.append(install_python(spec, home))
        else:
            done.append(install_folder(split_rev(spec), home))
    return done


def _stage(source: Source, home: Path, label: str | None = None) -> tuple[Path, Path, str | None]:
    """Fetch ``source`` into a new staging folder (``label``: how a refusal names it)."""
    stage = staging_dir(home)
    try:
        folder, rev = fetch(source, stage)
    except (FetchError, OSError) as exc:
        remove(stage)
        raise InstallError(f"cannot fetch {label or source.text()}: {exc}") from None
    return stage, folder, rev


def _checked(folder_path: Path, home: Path, what: str) -> PluginFolder:
    if detect_format(folder_path) is None:
        raise InstallError(
            f"{what} holds no plugin (no plugin.json, .codex-plugin/ or .claude-plugin/)"
        )
    folder = read_folder(folder_path, "installed", home)
    if folder.rejected:
        raise InstallError(f"{what} is not a valid plugin", report_of(folder, folder_path))
    if not _SAFE_NAME.match(folder.name):
        raise InstallError(f"{what}: the plugin name {folder.name!r} cannot be a folder name")
    return folder


_ENTRY_MANIFEST = (
    *("name", "version", "description", "author"),
    *("skills", "commands", "agents", "hooks", "mcpServers", "lspServers"),
)


def entry_manifest(entry: dict[str, Any]) -> str | None:
    """A ``"strict": false`` marketplace entry is the plugin's manifest (Claude Code's rule: its
    folder needs no ``plugin.json``): the entry's manifest fields as JSON, else ``None``."""
    if entry.get("strict") is not False:
        return None
    return json.dumps({key: entry[key] for key in _ENTRY_MANIFEST if key in entry})


def _with_manifest(folder: Path, manifest: str | None) -> None:
    """Write ``manifest`` as the folder's ``.claude-plugin/plugin.json`` if it has none."""
    target = folder / ".claude-plugin" / "plugin.json"
    if manifest is not None and not os.path.lexists(target):
        target.parent.mkdir(exist_ok=True)
        target.write_text(manifest, encoding="utf-8")


def install_folder(
    source: Source,
    home: Path,
    *,
    replace: bool = False,
    extra: dict[str, Any] | None = None,
    manifest: str | None = None,
    within: Path | None = None,
    label: str | None = None,
) -> Installed:
    """Fetch, validate and move one folder plugin into place; record it (``manifest``: from a
    ``"strict": false`` marketplace entry, see :func:`entry_manifest`; ``within``: the
    marketplace the plugin's symlinks may lead into, :func:`.fetch.contain_links`; ``label``:
    how messages name it, ``NAME@MARKETPLACE``)."""
    label = label or source.text()
    stage, fetched, rev = _stage(source, home, label)
    try:
        origin = fetched if rev is not None else Path(source.location)
        removed = contain_links(fetched, origin, within or origin)
        _with_manifest(fetched, manifest)
        folder = _checked(fetched, home, label)
        target = plugins_dir(home) / folder.name
        records = read_registry(home)
        if (target.exists() or folder.name in records) and not replace:
            raise InstallError(
                f"a plugin named {folder.name!r} is already installed "
                f"(`mycode plugins update {folder.name}` or uninstall it first)"
            )
        digest = content_hash(fetched)
        if target.exists():
            old = stage / ".old"
            os.replace(target, old)
        os.replace(fetched, target)
        record = {
            "kind": "folder",
            "source": (extra or {}).pop("fetched_from", None) or source.location,
            "rev": rev,
            "pinned": bool(source.rev) or None,
            "hash": digest,
            "format": folder.format,
            "manifest": manifest,
            **(extra or {}),
        }
        records[folder.name] = record
        write_registry(home, records)
        data_dir(home, folder.name).mkdir(parents=True, exist_ok=True)
        detail = f"{digest[:19]} from {label}"
        if removed:
            detail += f"; left out {len(removed)} symlink(s) leading out of the plugin: "
            detail += ", ".join(removed)
        return Installed(folder.name, folder.format, detail)
    finally:
        remove(stage)


def _market_file(root: Path) -> tuple[Path, dict[str, Any]]:
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


def add_marketplace(source_text: str, home: Path) -> tuple[str, str, int]:
    """Fetch a marketplace, check it and record it by its name: ``(name, source, plugins)``."""
    from mycode_claude_compat.marketplaces import github_source, record

    resolved = github_source(source_text)
    local = Path(resolved.partition("#")[0]).expanduser()
    if local.exists():
        resolved = str(local.resolve())
    stage, root, _rev = _stage(split_rev(resolved), home)
    try:
        _path, data = _market_file(root)
    finally:
        remove(stage)
    name = data.get("name")
    if not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise InstallError(f"{source_text}: the marketplace has no usable name ({name!r})")
    record(home, name, resolved)
    return name, resolved, len(data["plugins"])


def _entry_source(
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


def _install_subdir(
    source: Source, subdir: str, home: Path, extra: dict[str, Any], manifest: str | None, label: str
) -> Installed:
    """Install the plugin in the folder ``subdir`` of the git repository ``source``."""
    stage, fetched, rev = _stage(source, home)
    try:
        inner = (fetched / subdir).resolve()
        if not inner.is_relative_to(fetched.resolve()) or not inner.is_dir():
            raise InstallError(f"{source.text()} holds no folder {subdir!r}")
        extra.update(subdir=subdir, fetched_from=source.location, rev=rev)
        extra["pinned"] = bool(source.rev) or None
        return install_folder(
            Source(str(inner)), home, extra=extra, manifest=manifest, within=fetched, label=label
        )
    finally:
        remove(stage)


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


def _refuse_unavailable(entry: dict[str, Any], market: str) -> None:
    """Codex's ``"policy": {"installation": "NOT_AVAILABLE"}``: listed, not installable (as
    Codex refuses it; ``AVAILABLE`` and ``INSTALLED_BY_DEFAULT`` install)."""
    policy = entry.get("policy")
    if isinstance(policy, dict) and policy.get("installation") == "NOT_AVAILABLE":
        raise InstallError(
            f"marketplace {market} lists {entry.get('name')!r} as not available for install "
            '("policy": {"installation": "NOT_AVAILABLE"})'
        )


def install_from_marketplace(name: str, market: str, home: Path) -> Installed:
    """``NAME@MARKETPLACE``: find NAME in the marketplace's list and install it (MARKETPLACE:
    a path or URL, an added or known name, or ``owner/repo``: :mod:`.marketplaces`)."""
    from mycode_claude_compat.marketplaces import resolve

    source = split_rev(resolve(market, home))
    stage, root, rev = _stage(source, home)
    try:
        _path, data = _market_file(root)
        entry, renamed = find_entry(data, name, market)
        _refuse_unavailable(entry, market)
        plugin_source, subdir = _entry_source(entry, root, data)
        manifest = entry_manifest(entry)
        name = str(entry["name"])
        extra: dict[str, Any] = {"marketplace": source.text(), "marketplace_entry": name}
        label = f"{name}@{market}" + (f" (renamed from {renamed})" if renamed else "")
        if subdir is not None:
            return _install_subdir(plugin_source, subdir, home, extra, manifest, label)
        within = None
        if not plugin_source.is_url:
            relative = Path(plugin_source.location).relative_to(root.resolve())
            if not source.is_url and not is_git_repository(Path(source.location)):
                # a plain marketplace folder: the plugin's own folder is its source
                plugin_source = Source(str(Path(source.location) / relative), plugin_source.rev)
                within = Path(source.location)
            else:  # inside a cloned marketplace: update clones the marketplace again
                extra.update(subdir=str(relative), fetched_from=source.location, rev=rev)
                within = root
        return install_folder(
            plugin_source, home, extra=extra, manifest=manifest, within=within, label=label
        )
    finally:
        remove(stage)


def _installer(args: list[str]) -> list[str]:
    beside = Path(sys.executable).with_name("uv")
    uv = shutil.which("uv") or (str(beside) if beside.is_file() else None)
    if uv:
        return [uv, "pip", *args[:1], "--python", sys.executable, *args[1:]]
    return [sys.executable, "-m", "pip", *args[:1], *(["-y"] if args[0] == "uninstall" else [])] + [
        *args[1:]
    ]


def install_python(spec: str, home: Path) -> Installed:
    """A requirement, a project folder or a wheel into mycode's own interpreter, then
    ``plugins --check``."""
    target = spec
    path = Path(spec).expanduser()
    if path.exists():
        target = str(path.resolve())
    elif spec.endswith(".whl") or spec.startswith((".", "/", "~")):
        raise InstallError(f"{spec} does not exist")
    try:
        done = subprocess.run(
            _installer(["install", target]), capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise InstallError(f"cannot run the installer: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise InstallError(f"cannot install {spec}: {lines[-1].strip() if lines else 'failed'}")
    check = subprocess.run(
        [sys.executable, "-m", "mycode_core", "plugins", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    records = read_registry(home)
    records[_distribution_name(spec)] = {"kind": "python", "source": target}
    write_registry(home, records)
    status = "plugins --check passed" if check.returncode == 0 else "plugins --check FAILED"
    if check.returncode != 0:
        tail = [line for line in check.stderr.splitlines() if line.strip()]
        status += ": " + (tail[0] if tail else "see `mycode plugins --check`")
    return Installed(_distribution_name(spec), "python", status)


def _distribution_name(spec: str) -> str:
    path = Path(spec).expanduser()
    if spec.endswith(".whl"):
        return path.name.split("-", 1)[0].replace("_", "-").lower()
    if path.is_dir():
        try:
            import tomllib

            project = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
            return str(project["project"]["name"]).lower()
        except (OSError, ValueError, KeyError):
            return path.resolve().name
    return re.split(r"[\s<>=!~;\[@]", spec, maxsplit=1)[0].lower()


def uninstall(name: str, home: Path) -> str:
    """Remove an installed plugin of either kind (and its ``PLUGIN_DATA``)."""
    records = read_registry(home)
    record = records.get(name)
    target = plugins_dir(home) / name
    if record is not None and record.get("kind") == "python":
        done = subprocess.run(
            _installer(["uninstall", name]), capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            raise InstallError(f"cannot uninstall {name}: {lines[-1] if lines else 'failed'}")
    elif record is None and not (_SAFE_NAME.match(name) and target.is_dir()):
        raise InstallError(f"no installed plugin named {name!r}")
    else:
        remove(target)
        remove(data_dir(home, name))
    records.pop(name, None)
    write_registry(home, records)
    return f"uninstalled {name}"


def trust(name: str, home: Path) -> str:
    """Record the installed folder's current files as approved."""
    records = read_registry(home)
    target = plugins_dir(home) / name
    if name not in records or records[name].get("kind") == "python" or not target.is_dir():
        raise InstallError(f"no installed folder plugin named {name!r}")
    old = records[name].get("hash")
    records[name]["hash"] = content_hash(target)
    write_registry(home, records)
    if old == records[name]["hash"]:
        return f"{name}: files unchanged ({old})"
    return f"{name}: approved its current files ({old} -> {records[name]['hash']})"


@dataclass
class Refetched:
    """A plugin fetched again for ``plugins update``, waiting in its staging folder."""

    stage: Path
    folder: Path
    rev: str | None
    old: str
    new: str
    manifest: str | None
    """the manifest of a ``"strict": false`` marketplace entry, as the marketplace says now"""


def refetch(name: str, home: Path) -> Refetched:
    """Fetch the recorded source again into staging (and, for a plugin from a marketplace
    whose entry is its manifest, that entry as the marketplace says it now)."""
    record = read_registry(home).get(name)
    if record is None or record.get("kind") == "python":
        raise InstallError(f"no installed folder plugin named {name!r}")
    rev = record.get("rev") if record.get("pinned") else None
    source = Source(str(record["source"]), rev if isinstance(rev, str) else None)
    stage, fetched, new_rev = _stage(source, home)
    origin = fetched if new_rev is not None else Path(source.location)
    within = _local_marketplace(record, origin)
    subdir = record.get("subdir")
    if isinstance(subdir, str):  # a plugin inside a git marketplace
        inner = (fetched / subdir).resolve()
        if not inner.is_relative_to(fetched.resolve()) or not inner.is_dir():
            remove(stage)
            raise InstallError(f"{source.text()} no longer holds {subdir}")
        within, fetched = fetched, inner
        origin = inner
    try:
        contain_links(fetched, origin, within or origin)
        manifest = _entry_manifest_now(record, home, within)
        _with_manifest(fetched, manifest)
        folder = _checked(fetched, home, source.text())
        if folder.name != name:
            raise InstallError(f"{source.text()} now holds a plugin named {folder.name!r}")
    except InstallError:
        remove(stage)
        raise
    # the manifest is written into the folder, so a changed entry changes the hash too
    return Refetched(
        stage, fetched, new_rev, str(record.get("hash")), content_hash(fetched), manifest
    )


def _entry_manifest_now(record: dict[str, Any], home: Path, clone: Path | None) -> str | None:
    """The manifest a ``"strict": false`` entry gives the plugin, read from the marketplace
    again (``clone``: the marketplace's fresh clone when the plugin lies in it); the recorded
    one when the marketplace cannot be read; refused when it no longer lists the plugin."""
    recorded = record.get("manifest")
    recorded = recorded if isinstance(recorded, str) else None
    market, entry = record.get("marketplace"), record.get("marketplace_entry")
    if recorded is None or not isinstance(market, str) or not isinstance(entry, str):
        return recorded
    if clone is not None and record.get("source") == split_rev(market).location:
        stage, root = None, clone
    else:
        try:
            stage, root, _rev = _stage(split_rev(market), home)
        except InstallError:
            return recorded  # the plugin itself was fetched; its marketplace is not reachable
    try:
        _path, data = _market_file(root)
        found, _renamed = find_entry(data, entry, market)
    finally:
        if stage is not None:
            remove(stage)
    return entry_manifest(found)


def _local_marketplace(record: dict[str, Any], origin: Path) -> Path | None:
    """The marketplace folder a plugin installed from a plain (not git) marketplace folder
    lies in, or ``None``."""
    market = record.get("marketplace")
    if not isinstance(market, str) or Source(market).is_url:
        return None
    path = Path(market)
    return path if path.is_dir() and origin.resolve().is_relative_to(path.resolve()) else None


def apply_update(name: str, home: Path, update: Refetched) -> None:
    """Swap the fetched folder in (``PLUGIN_DATA`` is elsewhere and stays) and record it."""
    try:
        records = read_registry(home)
        target = plugins_dir(home) / name
        if target.exists():
            os.replace(target, update.stage / ".old")
        os.replace(update.folder, target)
        records[name]["hash"] = content_hash(target)
        records[name]["rev"] = update.rev
        if update.manifest is not None:
            records[name]["manifest"] = update.manifest
        write_registry(home, records)
    finally:
        remove(update.stage)
