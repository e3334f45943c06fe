"""``SubagentStart``: hooks matching a subagent's profile (its ``agent_type``) run when it
starts, and their ``additionalContext`` is part of that subagent's instructions.

Fired from ``build_context`` of the child's run, before its first request; asked once per
subagent (the text is kept when the sections are built again). A hook cannot stop the
subagent: exit 2 is shown to the user, as in Claude Code.
"""

from __future__ import annotations

from typing import Any

SECTION_PRIORITY = 900
"""After the project's instructions and the plugins' sections: the hooks speak last."""


def sections(state: Any) -> list[Any]:
    """The ``SubagentStart`` context of ``state``'s subagent (none for the main agent)."""
    if state.agent_id is None:
        return []
    if state.subagent_context is None:
        decision = state.fire("SubagentStart", state.agent_type)
        state.subagent_context = list(decision.context) if decision is not None else []
    if not state.subagent_context:
        return []
    from mycode_core import ContextSection

    text = "\n\n".join(state.subagent_context)
    return [ContextSection(title="SubagentStart hooks", text=text, priority=SECTION_PRIORITY)]
