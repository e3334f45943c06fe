"""One session's language servers, shared by its main agent and every subagent.

A subagent (``delegate_task``) runs with a ``RunContext`` of its own whose ``store`` starts
empty, and ``register_tools`` is not called for it (it gets its parent's tools). So the state
the main agent's ``register_tools`` set up is also kept by session, under the run's plugin
manager — the agent tree shares it, and it is weakly held — and the session id (the same along
the tree): a child finds it there on first use, and its ``lsp`` calls and the diagnostics after
its writes go to the same servers, which the main agent stops once, at the end of the run.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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


_BY_MANAGER: weakref.WeakKeyDictionary[Any, dict[str, LspSession]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def keep(context: RunContext, session: LspSession) -> None:
    """Make ``session`` the one of ``context``'s session, for its subagents too, until the
    run ends."""
    context.store[STORE_KEY] = session
    manager, session_id = context.plugin_manager, context.session_id
    if manager is None:
        return
    with _LOCK:
        _BY_MANAGER.setdefault(manager, {})[session_id] = session

    def forget() -> None:
        with _LOCK:
            kept = _BY_MANAGER.get(manager, {})
            if kept.get(session_id) is session:
                del kept[session_id]

    context.cleanup.append(forget)


def session_of(context: RunContext) -> LspSession | None:
    """The language servers of ``context``'s session (``None``: it has none)."""
    found: LspSession | None = context.store.get(STORE_KEY)
    manager = getattr(context, "plugin_manager", None)
    if found is None and getattr(context, "agent_id", None) is not None and manager is not None:
        with _LOCK:
            found = _BY_MANAGER.get(manager, {}).get(context.session_id)
        if found is not None:
            context.store[STORE_KEY] = found
    return found
