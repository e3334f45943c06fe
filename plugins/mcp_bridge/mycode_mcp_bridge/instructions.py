"""The servers' own instructions (``instructions`` of their ``initialize`` answer) as a section
of the system prompt, one heading per server, as Claude Code gives them to the model.

The section waits for the servers to start (the first request waits for them anyway); each
server's text is cut at :data:`MAX_CHARS`, and it stays the same all run, so the prompt prefix
stays cacheable.
"""

from __future__ import annotations

from typing import Any

from mycode_core.records import ContextSection

MAX_CHARS = 4000
SECTION_PRIORITY = 60


def instruction_sections(bridge: Any) -> list[ContextSection]:
    """The section (none when no running server said anything)."""
    bridge.wait()
    parts = []
    for name, connection in sorted(bridge.connections.items()):
        text = connection.instructions if connection.state == "ready" else ""
        if text:
            cut = text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"
            parts.append(f"## {name}\n{cut}")
    if not parts:
        return []
    text = "What the MCP servers of this session say about using their tools:\n\n"
    return [
        ContextSection(
            title="MCP server instructions",
            text=text + "\n\n".join(parts),
            priority=SECTION_PRIORITY,
        )
    ]
