"""``/undo``, ``/checkpoints``, ``/rewind`` (:mod:`.rewind`) and ``/diff`` (:mod:`.diff`) in the
interactive session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_checkpoints import restore, store
from mycode_checkpoints.diff import diff_command
from mycode_checkpoints.recorder import refresh_after_undo
from mycode_checkpoints.rewind import rewind_command


def _undo(args: str, context: Any) -> Any:
    """``/undo [N] [--force]``: undo the last turn that changed files (or turn N and later)."""
    from mycode_core import SlashResult

    words = args.split()
    force = "--force" in words
    numbers = [w for w in words if w.isdigit()]
    turn = int(numbers[0]) if numbers else None
    try:
        done = restore.undo(Path(context.home), str(context.session_id), turn, force)
    except restore.UndoError as exc:
        return SlashResult(output=str(exc), exit_code=exc.code)  # as `mycode undo` exits
    refresh_after_undo(context, done)
    return SlashResult(output="\n".join(done) or "nothing changed")


def _list(args: str, context: Any) -> Any:
    """``/checkpoints``: the turns of this session that changed files."""
    from mycode_core import SlashResult

    lines = []
    for meta in store.load_turns(Path(context.home), str(context.session_id)):
        flag = " (undone)" if meta.get("undone") else ""
        files = ", ".join([*(f"{f['change']} {f['path']}" for f in meta["files"]),
                           *(f"created {d}/" for d in meta.get("folders", []))])  # fmt: skip
        lines.append(f"turn {meta['turn']}{flag}: {files}")
    return SlashResult(output="\n".join(lines) or "no checkpoints in this session")


def commands() -> list[Any]:
    """The slash commands of the plugin."""
    from mycode_core import SlashCommand

    return [
        SlashCommand(name="undo", description="Undo the last turn's files (or turn N and later)",
                     argument_hint="[N] [--force]", run=_undo, plugin="checkpoints"),
        SlashCommand(name="checkpoints", description="List the turns that changed files",
                     run=_list, plugin="checkpoints"),
        SlashCommand(name="rewind", description="Back to before a turn: its files and the "
                     "conversation (no N: pick one)", argument_hint="[N] [--force]",
                     run=rewind_command, plugin="checkpoints"),
        SlashCommand(name="diff", description="What this session changed (from turn N)",
                     argument_hint="[N]", run=diff_command, plugin="checkpoints"),
    ]  # fmt: skip
