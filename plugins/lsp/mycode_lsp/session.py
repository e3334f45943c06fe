"""One session's language servers, shared by its main agent and every subagent.

They are kept in ``context.session_store`` — the same dict along the agent tree — so a
subagent (for which ``register_tools`` is not called) finds the servers the main agent's
``register_tools`` set up: its ``lsp`` calls and the diagnostics after its writes go to them,
and the main agent stops them once, at the end of the run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mycode_core.records import RunContext
    from mycode_lsp.servers import Servers
    from mycode_lsp.specs import ServerSpec

STORE_KEY = "lsp"


@dataclass(eq=False)
class LspSession:
    """The servers of a session, those not installed, and the problems already told."""

    servers: Servers | None
    missing: list[ServerSpec] = field(default_factory=list)
    """Servers whose command is not installed, until a call names a file of theirs."""
    said: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards ``missing`` and ``said`` (parallel subagents share them)."""


def keep(context: RunContext, session: LspSession) -> None:
    """Make ``session`` the one of ``context``'s session, for its subagents too."""
    context.session_store[STORE_KEY] = session


def session_of(context: RunContext) -> LspSession | None:
    """The language servers of ``context``'s session (``None``: it has none)."""
    found: LspSession | None = context.session_store.get(STORE_KEY)
    return found
