"""Marketplaces by name, as Claude Code's ``/plugin marketplace add`` keeps them.

``mycode plugins marketplace add SOURCE`` (a folder, a git repository or URL, or GitHub's
``owner/repo``) records the marketplace under the ``name`` its ``marketplace.json`` gives, in
``$MYCODE_HOME/marketplaces.json``; ``NAME@MARKETPLACE`` then takes that name. Claude Code's own
``claude-plugins-official`` is known without adding it, and ``NAME@owner/repo`` reads the
GitHub repository. A local path always means itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mycode_core.api import replace_atomically

KNOWN = {"claude-plugins-official": "https://github.com/anthropics/claude-plugins-official.git"}
"""Marketplaces Claude Code knows without being told."""
_GITHUB = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
FILE = "marketplaces.json"


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
