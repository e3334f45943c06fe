"""The ``[mcp]`` config table, checked by the core before a run (``register_settings``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class McpSettings(BaseModel):
    """``[mcp]``: how MCP servers are started and called."""

    startup_timeout: float | None = Field(default=None, gt=0)
    call_timeout: float | None = Field(default=None, gt=0)
    tool_timeout: float | None = Field(default=None, gt=0)
    max_call_time: float | None = Field(default=None, gt=0)
    max_output_chars: int | None = Field(default=None, ge=1)
    trust_project_servers: bool | list[str] = False
