"""``mycode memory [list|forget ID|edit|add TEXT]``: the notes, outside a session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click


class _StoreFailure(click.ClickException):
    """The memory store cannot be used (exit code 1, one readable line)."""


def _store(cwd: str | None) -> Any:
    from mycode_core.config import home_dir
    from mycode_memory.store import MemoryStore

    return MemoryStore(home_dir(), Path(cwd or os.getcwd()).resolve())


def _scopes(user: bool, project: bool) -> tuple[str, ...]:
    if user and not project:
        return ("user",)
    if project and not user:
        return ("project",)
    return ("project", "user")


def list_text(store: Any, scopes: tuple[str, ...]) -> str:
    """The notes as readable lines, newest first (also used by ``/memory``)."""
    notes = [n for scope in scopes for n in store.notes(scope)]
    if not notes:
        return "No notes remembered yet."
    lines = []
    for note in sorted(notes, key=lambda n: -n.created):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(note.created))
        text = " ".join(note.text.split())
        lines.append(f"{note.id}  {note.scope:<7}  {when}  {text}")
    return "\n".join(lines)


@click.group(name="memory", invoke_without_command=True)
@click.option("--cwd", type=click.Path(file_okay=False), help="Workspace (default: here).")
@click.pass_context
def memory_command(ctx: click.Context, cwd: str | None) -> None:
    """Notes mycode remembers across sessions: list, edit, forget."""
    ctx.obj = {"cwd": cwd}
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command)


@memory_command.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--user", is_flag=True, help="Only the user's notes.")
@click.option("--project", is_flag=True, help="Only this project's notes.")
@click.pass_context
def list_command(
    ctx: click.Context, as_json: bool = False, user: bool = False, project: bool = False
) -> None:
    """List the notes of this project and of the user, newest first."""
    from mycode_memory.store import StoreError

    store = _store((ctx.obj or {}).get("cwd"))
    scopes = _scopes(user, project)
    try:
        if as_json:
            notes = [n for scope in scopes for n in store.notes(scope)]
            rows = [
                {"id": n.id, "scope": n.scope, "created": n.created, "text": n.text}
                for n in sorted(notes, key=lambda n: -n.created)
            ]
            click.echo(json.dumps(rows, indent=2))
            return
        click.echo(list_text(store, scopes))
    except StoreError as exc:
        raise _StoreFailure(str(exc)) from None


@memory_command.command(name="forget")
@click.argument("note_id")
@click.pass_context
def forget_command(ctx: click.Context, note_id: str) -> None:
    """Forget the note NOTE_ID (a unique prefix is enough)."""
    from mycode_memory.store import StoreError

    try:
        note = _store((ctx.obj or {}).get("cwd")).forget(note_id)
    except StoreError as exc:
        raise _StoreFailure(str(exc)) from None
    click.echo(f"Forgot {note.scope} note {note.id}: {' '.join(note.text.split())[:80]}")


@memory_command.command(name="add")
@click.argument("text", nargs=-1, required=True)
@click.option("--user", is_flag=True, help="A note for every project.")
@click.pass_context
def add_command(ctx: click.Context, text: tuple[str, ...], user: bool) -> None:
    """Remember TEXT (this project, or every project with --user)."""
    from mycode_memory.store import StoreError
    from mycode_memory.tool import note_problem

    problem = note_problem(" ".join(text).strip())
    if problem is not None:
        raise _StoreFailure(problem)
    try:
        note, added = _store((ctx.obj or {}).get("cwd")).add(
            " ".join(text), "user" if user else "project"
        )
    except StoreError as exc:
        raise _StoreFailure(str(exc)) from None
    click.echo(f"{'Remembered' if added else 'Already remembered'}: {note.scope} note {note.id}")


@memory_command.command(name="edit")
@click.option("--user", is_flag=True, help="Edit the user's notes instead of the project's.")
@click.pass_context
def edit_command(ctx: click.Context, user: bool) -> None:
    """Edit the notes in $VISUAL / $EDITOR (delete a block to forget a note)."""
    from mycode_memory.editing import edit_in_editor
    from mycode_memory.store import Scope, StoreError

    scope: Scope = "user" if user else "project"
    try:
        before, after = edit_in_editor(_store((ctx.obj or {}).get("cwd")), scope)
    except (StoreError, OSError) as exc:
        raise _StoreFailure(str(exc)) from None
    click.echo(f"Saved: {after} notes (were {before}).")
