"""Interactive ``/status`` (the session at a glance) and ``/permissions`` (the rules in effect)."""

from __future__ import annotations

import shutil
import textwrap
from typing import Any

from mycode_core import trust
from mycode_core.runtime.tools import mode_layer


def status_lines(runner: Any, width: int | None = None) -> list[str]:
    """Session, model and endpoint, workspace and its trust, permission mode, tokens, tools
    (a list too long for the terminal, or ``width`` columns, goes on under itself)."""
    settings = runner.settings
    usage = getattr(runner, "usage", None) or {}
    registry = getattr(runner.context, "tools", None)
    tools = registry.names() if registry is not None else []
    trusted = "trusted" if trust.state(settings)["trusted"] else "untrusted (mycode trust)"
    columns = width or shutil.get_terminal_size((100, 24)).columns
    listed = textwrap.fill(
        f"tools        {len(tools)}: {', '.join(sorted(tools)) or 'none'}",
        width=max(40, columns - 1),
        subsequent_indent=" " * 13,  # under the values
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [
        f"session      {runner.session_id}",
        f"model        {settings.model or '(none)'}",
        f"endpoint     {settings.base_url or '(the provider default)'}",
        f"workspace    {runner.workspace} — {trusted}",
        f"mode         {settings.permission_mode} (set by: {mode_layer(settings)}; /mode)",
        f"tokens       {int(usage.get('input_tokens', 0)):,} in, "
        f"{int(usage.get('output_tokens', 0)):,} out (this session)",
        listed,
    ]


def permission_lines(runner: Any) -> list[str]:
    """Every permission rule in effect, deny first, each with the layer that holds it, and the
    answers given "for this session"."""
    lines: list[str] = []
    for kind in ("deny", "ask", "allow"):
        for layer, data in runner.settings.layers:
            table = data.get("permissions") if isinstance(data, dict) else None
            rules = table.get(kind) if isinstance(table, dict) else None
            for rule in rules or ():
                lines.append(f"{kind:<6} {rule}  ({layer})")
    for rule in sorted(getattr(runner.context, "session_grants", ()) or ()):
        lines.append(f"allow  {rule}  (session: your answer)")
    if not lines:
        return [f"no rules: the {runner.settings.permission_mode} mode's defaults decide"]
    return [*lines, "deny > ask > allow; add rules under [permissions] in config.toml"]
