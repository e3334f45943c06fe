"""mycode-batch: ``mycode batch`` runs the agent over a JSONL file of tasks (SPEC §10).

Each task is a real ``mycode -p`` process on its own copy of its workspace, run by a local
pool of workers or as Ray tasks (``pip install 'mycode-batch[ray]'``). See the README.

This module is imported at CLI start-up: it imports nothing heavy (``ray`` only inside the
executor, when ``--executor ray`` is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mycode_core import hookimpl

if TYPE_CHECKING:
    import click

__version__ = "0.1.0"


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode batch``."""
    from mycode_batch.cli import batch_command

    cli.add_command(batch_command())
