"""The hook this plugin adds to mycode (through ``add_hookspecs``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mycode_core.hookspecs import hookspec

if TYPE_CHECKING:
    from mycode_core.records import RunContext


@hookspec
def register_lsp_servers(register: Callable[..., None], context: RunContext) -> None:
    """Contribute language servers for the ``lsp`` tool and the diagnostics after edits.

    Called once per run, when the tools are collected. Call ``register(name, entry,
    plugin=None)`` with an entry written as Claude Code's ``lspServers`` writes one
    (``command``, ``args``, ``extensionToLanguage``, ``env``, ``initializationOptions``,
    ``settings``, ``startupTimeout`` in ms; see :mod:`mycode_lsp.specs`). A server of
    ``[lsp.servers]`` in the config wins over one of the same name registered here. A plugin that
    implements this without depending on this plugin marks it ``@hookimpl(optionalhook=True)``
    (the Claude Code compatibility plugin does, for plugin folders' ``lspServers``).

    :param register: callback taking a server name, its entry and the contributing plugin.
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """
