"""The interactive session's own slash commands (``/help``, ``/mode``...): their names, what
each does and how it is typed. Kept apart so that the slash-command collection
(:mod:`.slash`) knows which names a plugin's alias may never take."""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "help": "this help: every command, the plugins' included",
    "clear": "start a fresh conversation (a new session)",
    "sessions": "list the sessions of this workspace",
    "resume": "load an earlier session (no ID: pick one of this workspace's)",
    "compact": "summarise older turns before the next request",
    "model": "show the model in use, or switch to NAME for the rest of the session",
    "context": "what the model view holds (system, tools, summary, recent, masked)",
    "mode": "show the permission mode, or switch it: default, accept-edits, plan (Shift+Tab)",
    "permissions": "the permission rules in effect, each with the layer that holds it",
    "export": "write this session as an HTML page (default: under $MYCODE_HOME/exports/)",
    "status": "session, model, endpoint, workspace trust, mode, tokens and tools",
    "exit": "leave (Ctrl-D works too)",
}
"""The session's own slash commands and what each does (Tab completes them)."""
USAGE = {
    "resume": "/resume [ID]",
    "compact": "/compact [focus]",
    "model": "/model [NAME]",
    "mode": "/mode [MODE]",
    "export": "/export [FILE]",
}

RESERVED = frozenset({*COMMANDS, "quit"})
"""Every name the session handles itself (``/quit`` is ``/exit``): plugin commands of these
names never run in a session, and an alias (``SlashCommand.alias_of``) never takes one."""
