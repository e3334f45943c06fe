"""``/memory [list|forget ID|edit [user]]`` and ``/init`` for the interactive session."""

from __future__ import annotations

from typing import Any


def _output(text: str) -> Any:
    from mycode_core import SlashResult

    return SlashResult(output=text)


def memory_command(arguments: str, context: Any) -> Any:
    """``/memory``: list (default), ``forget ID``, ``edit`` / ``edit user``."""
    from mycode_memory.cli import list_text
    from mycode_memory.editing import edit_in_editor
    from mycode_memory.store import MemoryStore, StoreError

    store = MemoryStore(context.home, context.workspace)
    words = arguments.split()
    action = words[0].lower() if words else "list"
    try:
        if action in ("list", "ls"):
            return _output(list_text(store, ("project", "user")))
        if action in ("forget", "rm", "delete"):
            if len(words) < 2:
                return _output("Usage: /memory forget ID (see /memory for the ids)")
            note = store.forget(words[1])
            return _output(f"Forgot {note.scope} note {note.id}.")
        if action == "edit":
            scope = "user" if len(words) > 1 and words[1].lower() == "user" else "project"
            before, after = edit_in_editor(store, scope)  # type: ignore[arg-type]
            return _output(f"Saved {scope} notes: {after} (were {before}).")
    except (StoreError, OSError) as exc:
        return _output(f"memory: {exc}")
    return _output("Usage: /memory [list | forget ID | edit [user]]")


def init_command(arguments: str, context: Any) -> str:
    """``/init``: the prompt that has the agent survey the workspace and write AGENTS.md."""
    from mycode_memory.init import init_prompt

    return init_prompt(arguments)
