"""The ``remember`` tool: keep a note for later sessions, under ``MYCODE_HOME``."""

from __future__ import annotations

from typing import Any, Literal

from mycode_core import RunContext, ToolResult, tool
from mycode_core.records import CallApproval
from mycode_memory.secrets import find_secret
from mycode_memory.store import MAX_NOTE_CHARS, SCOPES, MemoryStore, StoreError


def note_problem(text: str) -> str | None:
    """Why ``text`` (stripped) may not be remembered — empty, too long, a secret — or ``None``.
    The ``remember`` tool and ``mycode memory add`` both ask."""
    if not text:
        return "The note is empty: give the fact to remember."
    if len(text) > MAX_NOTE_CHARS:
        return f"The note is {len(text)} characters long (at most {MAX_NOTE_CHARS}); shorten it."
    secret = find_secret(text)
    if secret is not None:
        return (
            f"Not remembered: the note holds what looks like {secret}, and notes are shown to "
            "every later session. Remember where the secret is kept (an environment variable, "
            "a file, a vault), never the secret itself."
        )
    return None


def save_note(note: str, scope: str, context: Any) -> ToolResult:
    """Save ``note`` in ``scope`` for ``context``'s workspace."""
    text = note.strip()
    problem = note_problem(text)
    if problem is not None:
        return ToolResult.error(problem)
    if scope not in SCOPES:
        return ToolResult.error(f"Unknown scope {scope!r}: use 'project' or 'user'.")
    store = MemoryStore(context.home, context.workspace)
    try:
        saved, added = store.add(text, scope)  # type: ignore[arg-type]
    except StoreError as exc:
        return ToolResult.error(f"Could not remember the note: {exc}")
    if not added:
        return ToolResult(content=f"Already remembered ({scope} note {saved.id}).")
    return ToolResult(
        content=f"Remembered as {scope} note {saved.id}; later sessions will see it.",
        metadata={"memory": {"id": saved.id, "scope": scope}},
    )


@tool(risk="low")
def remember(
    note: str,
    context: RunContext,
    scope: Literal["project", "user"] = "project",
) -> ToolResult:
    """Save a lasting fact (convention, command, preference) for later sessions; scope user:
    all projects. No secrets."""
    return save_note(note, scope, context)


def user_scope_approval(arguments: dict[str, Any], context: Any) -> CallApproval | None:
    """A note for the user scope needs approval: it reaches every other workspace's prompt
    (a prompt injection read here would travel). The project scope stays unasked."""
    if arguments.get("scope") != "user":
        return None
    return CallApproval(
        reason=(
            "a user-scope note is shown to every later session in every workspace; "
            'allow it with [permissions] allow = ["remember(user)"] (or "remember")'
        ),
        subject="user",
        grant="remember(user)",
    )


REMEMBER = remember.model_copy(update={"approval_for": user_scope_approval})
