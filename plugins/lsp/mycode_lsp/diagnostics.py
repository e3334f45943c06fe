"""Diagnostics after an edit: what the language server finds in a file a tool just wrote.

Only errors and warnings are shown, at most :data:`MAX_SHOWN`, after the tool's own result::

    <diagnostics file="src/app.py">
    src/app.py:12:5: error: "undefined_name" is not defined [pyright reportUndefinedVariable]
    </diagnostics>
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_SHOWN = 20
SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
SHOWN_SEVERITIES = (1, 2)


def diagnostic_lines(shown: str, diagnostics: list[dict[str, Any]]) -> list[str]:
    """``path:line:col: severity: message [source code]`` for each error and warning."""
    kept = [d for d in diagnostics if int(d.get("severity") or 1) in SHOWN_SEVERITIES]
    kept.sort(key=lambda d: (int(d.get("severity") or 1), _line(d)))
    lines = []
    for item in kept[:MAX_SHOWN]:
        start = (item.get("range") or {}).get("start") or {}
        severity = SEVERITIES.get(int(item.get("severity") or 1), "error")
        origin = " ".join(str(x) for x in (item.get("source"), item.get("code")) if x)
        message = " ".join(str(item.get("message", "")).split())
        where = f"{shown}:{int(start.get('line', 0)) + 1}:{int(start.get('character', 0)) + 1}"
        lines.append(f"{where}: {severity}: {message}" + (f" [{origin}]" if origin else ""))
    if len(kept) > MAX_SHOWN:
        lines.append(f"… and {len(kept) - MAX_SHOWN} more")
    return lines


def _line(item: dict[str, Any]) -> int:
    return int(((item.get("range") or {}).get("start") or {}).get("line", 0))


def diagnostics_block(workspace: Path, path: Path, diagnostics: list[dict[str, Any]]) -> str:
    """The block appended to a tool's result ("" when the file has no error or warning)."""
    try:
        shown = str(path.relative_to(workspace))
    except ValueError:
        shown = str(path)
    lines = diagnostic_lines(shown, diagnostics)
    if not lines:
        return ""
    body = "\n".join(lines)
    return f'<diagnostics file="{shown}">\n{body}\n</diagnostics>'
