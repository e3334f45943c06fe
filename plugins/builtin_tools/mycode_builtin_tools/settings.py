"""The ``[builtin_tools]`` config table, checked by the core before a run."""

from __future__ import annotations

from pydantic import BaseModel, Field


class BuiltinToolsSettings(BaseModel):
    """``[builtin_tools]``: defaults of the built-in tools."""

    command_timeout: float = Field(default=120, gt=0, le=600)
    """Default ``run_command`` timeout in seconds (a call may pass its own, up to 600)."""
    sandbox_network: bool = False
    """Keep the network inside the command sandbox."""
