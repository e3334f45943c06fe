"""``/diff [N]``: what this session changed in the workspace, as one unified diff.

Each file a turn changed is compared from its content before the first of those turns (the
checkpoint's saved copy; nothing for a created file) to the file as it is now — so the diff
shows what the agent's turns (and any edit made since by hand) amount to, with or without git.
Undone turns are left out. ``N`` starts at turn N instead of the session's first.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from mycode_checkpoints import restore, store

MAX_LINES = 2000
"""How many lines of diff a reply shows at the most (the rest is counted, not shown)."""


def _lines(path: Path | None) -> list[str] | None:
    """The text lines of a file (``[]`` when absent; ``None`` when it is not text)."""
    if path is None:
        return []
    opened = store.open_regular(path)
    if opened is None:
        return []
    with opened as fh:
        data = fh.read()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def session_diff(home: Path, session_id: str, turn: int | None) -> str:
    """The unified diff of every file the session's turns (from ``turn``) changed."""
    turns = restore.active_turns(home, session_id)
    if turn is not None:
        turns = [t for t in turns if int(t["turn"]) >= turn]
    if not turns:
        return f"no changes to show in session {session_id}" + (
            f" from turn {turn}" if turn is not None else ""
        )
    changed = restore.gather(home, session_id, turns)
    out: list[str] = []
    for key, (meta, item) in sorted(changed.targets.items()):
        rel, now = changed.name(key), Path(key[0]) / key[1]
        blob = item.get("blob")
        before_path = None if item["change"] == "created" or not blob else (
            Path(meta["_dir"]) / "blobs" / str(blob)
        )  # fmt: skip
        before, after = _lines(before_path), _lines(now)
        if before is None or after is None:
            out.append(f"Binary file {rel} changed\n")
            continue
        label = rel.lstrip("/")  # a full path when the turns span workspaces
        old = "/dev/null" if item["change"] == "created" else f"a/{label}"
        new = f"b/{label}" if now.exists() else "/dev/null"
        for line in difflib.unified_diff(before, after, old, new):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    if not out:
        return "the files the session changed are as they were before it"
    text = "".join(out).splitlines()
    if len(text) > MAX_LINES:
        left = len(text) - MAX_LINES
        text = [*text[:MAX_LINES], f"… {left} more lines (mycode checkpoints lists the files)"]
    return "\n".join(text)


def diff_command(args: str, context: Any) -> Any:
    """``/diff [N]``: the session's changes (from turn N)."""
    from mycode_core import SlashResult

    numbers = [word for word in args.split() if word.isdigit()]
    turn = int(numbers[0]) if numbers else None
    return SlashResult(output=session_diff(Path(context.home), str(context.session_id), turn))
