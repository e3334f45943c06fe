"""mycode: a plugin-first coding agent for the terminal.

The public surface for plugin authors is :data:`hookimpl` and :mod:`mycode_core.records`.
``hookimpl`` is resolved lazily so that ``mycode --version`` does not even import pluggy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]

if TYPE_CHECKING:
    from mycode_core.hookspecs import hookimpl


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        from mycode_core.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(f"module 'mycode_core' has no attribute {name!r}")
