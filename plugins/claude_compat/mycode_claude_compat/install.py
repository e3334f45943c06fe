"""``mycode plugins install/uninstall/trust/validate`` (SPEC §11): one verb for every kind.

A folder plugin is fetched into a staging folder under ``$MYCODE_HOME/plugins/.staging``,
validated there, then renamed into ``$MYCODE_HOME/plugins/<name>/`` and recorded in
``plugins.toml`` (:mod:`.placing`); whatever fails leaves nothing behind. ``NAME@MARKETPLACE``
goes through :mod:`.marketplaces`, each marketplace fetched once per command. A Python
distribution goes into the interpreter mycode runs from (``uv pip install --python
sys.executable`` when uv is on PATH, else ``sys.executable -m pip install``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mycode_claude_compat.fetch import remove, split_rev
from mycode_claude_compat.folders import data_dir, detect_format, read_folder
from mycode_claude_compat.marketplaces import Markets, install_from_marketplace
from mycode_claude_compat.placing import (
    SAFE_NAME,
    Installed,
    InstallError,
    install_folder,
    name_problems,
    report_of,
)
from mycode_claude_compat.plugin_folder import PluginFolder
from mycode_claude_compat.registry import (
    content_hash,
    plugins_dir,
    read_registry,
    write_registry,
)

__all__ = ["InstallError", "Installed", "install", "install_one", "trust", "uninstall", "validate"]
_MARKET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)@(.+)\Z")


def validate(root: Path, home: Path, hook: Any = None) -> dict[str, Any] | None:
    """The validate report of ``root``, or ``None`` when it holds no plugin. With ``hook``
    (the plugin manager's relay) the skills plugin's ``validate_skills`` adds the problems of
    each skill as warnings."""
    if not root.is_dir() or detect_format(root) is None:
        return None
    folder = read_folder(root, "cli", home)
    report = report_of(folder)
    if not folder.rejected:
        report["fatal"] += name_problems(folder)
        report["warnings"] += skill_warnings(folder, hook)
    return report


def skill_warnings(folder: PluginFolder, hook: Any) -> list[dict[str, str]]:
    """``{"message", "section"}`` per problem of the folder's skills, as a run would read them
    (``validate_skills``, a hook the skills plugin adds; nothing when it is absent). Never
    fatal: a skill that fails skips only itself (SPEC §11). ``section`` is ``7.1`` (the Agent
    Plugins section on skills) for an Agent Plugins folder, else ``skills``."""
    section = "7.1" if folder.format == "agent-plugins" else "skills"
    return [
        {"message": _skill_message(item, folder.root), "section": section}
        for item in skill_findings(folder, hook)
    ]


def skill_findings(folder: PluginFolder, hook: Any) -> list[dict[str, Any]]:
    """What the skills plugin's ``validate_skills`` finds in each skills folder of ``folder``
    (``{"skill", "folder", "rule", "message", "loaded"}``, each once; ``[]`` without the
    hook). A failing check is one finding without a skill."""
    check = getattr(hook, "validate_skills", None) if hook is not None else None
    if check is None:
        return []
    portable = folder.format == "agent-plugins"
    findings: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for directory in folder.skill_dirs:
        try:
            results = check(
                path=directory, root=folder.root, folder_names=not portable, strict=portable
            )
        except Exception as exc:  # noqa: BLE001 - a broken check must not break validate
            findings.append({"message": f"skills not checked: {exc}"})
            continue
        for item in (found for result in results for found in result or ()):
            key = (str(item.get("folder")), str(item.get("rule")), str(item.get("message")))
            if key not in seen:
                seen.add(key)
                findings.append(item)
    return findings


def _skill_message(item: dict[str, Any], root: Path) -> str:
    where = str(item.get("folder", ""))
    try:
        where = Path(where).relative_to(root).as_posix()
    except ValueError:
        pass
    rule = f" [rule {item['rule']}]" if item.get("rule") else ""
    if not item.get("skill"):
        return f"{item.get('message')}{rule}"
    state = "loads, but" if item.get("loaded") else "is not loaded"
    return f"skill {item['skill']!r} ({where}) {state}: {item.get('message')}{rule}"


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


def install_one(spec: str, home: Path, markets: Markets) -> Installed:
    """Install one SPEC (a ``NAME@MARKETPLACE`` reads its marketplace through ``markets``)."""
    market = _is_marketplace(spec)
    if market is not None:
        return install_from_marketplace(market.group(1), market.group(2), home, markets)
    if _is_python(spec):
        return install_python(spec, home)
    return install_folder(split_rev(spec), home)


def install(specs: list[str], home: Path) -> list[Installed]:
    """Install each SPEC in order, each marketplace fetched once; raises
    :class:`InstallError` at the first refusal (the ones before it stay installed)."""
    with Markets(home) as markets:
        return [install_one(spec, home, markets) for spec in specs]


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
    elif record is None and not (SAFE_NAME.match(name) and target.is_dir()):
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
