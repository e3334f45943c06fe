"""``/help`` of the interactive session: the keys, the built-in commands and the plugins',
each command on one line that fits the terminal."""

from __future__ import annotations

import shutil

from mycode_core.cli.builtin_commands import COMMANDS, USAGE
from mycode_core.cli.prompts import wrapped

HELP_HEAD = (
    "Type a task and press Enter. Esc then Enter (or a line ending in \\) inserts a new line.\n"
    "Tab completes /commands and @path (a file of the workspace, inlined into the prompt).\n"
    "!command runs a command of yours in the workspace; the model sees it with your next message."
)
HELP_TAIL = (
    "Esc or Ctrl-C cancels the running turn. What you type during a turn waits for the next "
    "prompt (a line ended with Enter is sent when the turn ends; what you typed before a "
    "cancel is not sent: it waits in the prompt, to edit)."
)


def help_text(plugin: dict[str, str], width: int | None = None) -> str:
    """``/help``: the built-in commands, then every plugin's, each with its description, in
    lines that fit the terminal (or ``width`` columns)."""
    columns = width or shutil.get_terminal_size((100, 24)).columns
    lines = [wrapped(HELP_HEAD, width=columns)]
    lines += [
        _help_line(USAGE.get(name, "/" + name), text, columns) for name, text in COMMANDS.items()
    ]
    if plugin:
        lines.append("Plugin commands:")
        lines += [_help_line("/" + name, text, columns) for name, text in sorted(plugin.items())]
    lines.append(wrapped(HELP_TAIL, width=columns))
    return "\n".join(lines)


def _help_line(usage: str, text: str, columns: int) -> str:
    """One command's line of ``/help``, its description shortened with ``…`` to fit in
    ``columns``; the note of its other names (``(also /skill:pdf)``) is kept whole."""
    head = f"  {usage:<17} "
    room = columns - 1 - len(head)
    if len(text) <= room or room < 24:
        return head + text
    description, sep, others = text.rpartition(" (also ")
    note = f" (also {others}" if sep else ""
    if not sep or room - len(note) < 12:  # no note, or it would leave no room to read
        description, note = text, ""
    return head + description[: room - len(note) - 1].rstrip() + "…" + note
