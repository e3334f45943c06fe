"""mycode: a plugin-first coding agent for the terminal.

The public surface for plugin authors is :data:`hookimpl` and :mod:`mycode_core.records`.
"""

from mycode_core.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]
