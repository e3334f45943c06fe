"""``todo_write``: the agent's task list, replaced whole on each call.

The list lives at ``context.store["todos"]`` (dicts with ``content``, ``status``, ``id``) so
other plugins — the completion gate — can read it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mycode_core import RunContext, tool
from mycode_core.records import ToolResult

DESCRIPTION = "Replace your task list; keep one item in_progress, mark items completed when done."

STATUSES = ("pending", "in_progress", "completed")
STORE_KEY = "todos"
MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


def _validate(raw: Any) -> tuple[list[dict[str, str]] | None, str | None]:
    if not isinstance(raw, list):
        return None, "todos must be a list of {content, status, id?} objects."
    todos: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            return None, f"todo #{index} must be an object with content and status."
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            return None, f"todo #{index} needs a non-empty content string."
        status = item.get("status", "pending")
        if status not in STATUSES:
            return None, f"todo #{index} has status {status!r}; use one of {', '.join(STATUSES)}."
        ident = item.get("id")
        ident = str(index) if ident is None or str(ident).strip() == "" else str(ident)
        if ident in seen:
            return None, f"todo id {ident!r} is used twice; ids must be unique."
        seen.add(ident)
        todos.append({"content": content.strip(), "status": status, "id": ident})
    active = [t["id"] for t in todos if t["status"] == "in_progress"]
    if len(active) > 1:
        return None, (
            f"{len(active)} todos are in_progress (ids {', '.join(active)}); "
            "keep exactly one in_progress at a time."
        )
    return todos, None


def render(todos: list[dict[str, str]]) -> str:
    """The compact text form of a todo list."""
    if not todos:
        return "Todo list cleared."
    done = sum(1 for t in todos if t["status"] == "completed")
    lines = [f"Todos ({done}/{len(todos)} completed):"]
    lines += [f"{MARKS[t['status']]} {t['id']}. {t['content']}" for t in todos]
    return "\n".join(lines)


def _lean_schema(schema: dict[str, Any]) -> None:
    """The item schema the model sees: no description (the tool's says it) and ``id`` an
    optional string (SPEC §3; ids are given in order when missing, a number is accepted)."""
    schema.pop("description", None)
    schema.get("properties", {})["id"] = {"type": "string"}


class Todo(BaseModel):
    """One item of the task list (no description in the schema: the tool's says it)."""

    model_config = ConfigDict(json_schema_extra=_lean_schema)

    content: str
    status: Literal["pending", "in_progress", "completed"]
    id: str | int | None = None


@tool(name="todo_write", read_only=True, concurrency_safe=False, description=DESCRIPTION)
def todo_write(context: RunContext, todos: list[Todo]) -> ToolResult:
    """Replace the todo list with ``todos`` after validating it."""
    items = [todo.model_dump(exclude_none=True) for todo in todos]
    checked, problem = _validate(items)
    if problem is not None or checked is None:
        return ToolResult.error(problem or "invalid todos")
    with context.lock:
        context.store[STORE_KEY] = checked
    return ToolResult(content=render(checked), metadata={"todos": checked})
