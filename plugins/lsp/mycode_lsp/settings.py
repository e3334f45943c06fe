"""The ``[lsp]`` config table."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class LspSettings(BaseModel):
    """``[lsp]``: language servers of your own, and the diagnostics after edits."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``[lsp.servers.NAME]``: ``command``, ``args``, ``extensionToLanguage`` … as Claude Code's
    ``lspServers`` entries (:mod:`mycode_lsp.specs`)."""
    diagnostics: bool = True
    """Append the server's errors and warnings to the result of each tool that wrote a file."""
    diagnostics_wait_s: float = Field(default=5.0, ge=0, le=120)
    """How long to wait, after a write, for the server to publish the file's diagnostics."""
    request_timeout_s: float = Field(default=30.0, gt=0, le=600)
    """How long one ``lsp`` request may take."""
