"""Interactive ``!command``: a command of your own, run in the workspace as in a terminal.

You typed it, so it runs in your shell with your environment — not through the model's
permission rules or the sandbox (Claude Code's and pi's bash mode do the same). Its output
streams to the terminal; the command and its output, cut to :data:`MAX_CHARS`, go to the model
with your next message, so you can say "fix that" about what you just ran. Ctrl-C stops the
command (its whole process group), not the session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import click

MAX_CHARS = 20_000
"""How much of a command's output the model is given (its head and tail)."""


def run_shell(command: str, cwd: Path) -> tuple[int | None, str]:
    """Run ``command`` with ``$SHELL -c`` in ``cwd``, echoing its output; ``(exit code or None
    when interrupted, the output)``."""
    shell = os.environ.get("SHELL") or "/bin/sh"
    process = subprocess.Popen(
        [shell, "-c", command],
        cwd=str(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    chunks: list[str] = []
    try:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            chunks.append(line)
            click.echo(line, nl=False)
        return process.wait(), "".join(chunks)
    except KeyboardInterrupt:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None, "".join(chunks)
    finally:
        if process.stdout is not None:
            process.stdout.close()


def shell_note(command: str, code: int | None, output: str) -> str:
    """What the model is told of the command the user ran."""
    if len(output) > MAX_CHARS:
        half = MAX_CHARS // 2
        left_out = f"\n… ({len(output) - MAX_CHARS} characters left out) …\n"
        output = output[:half] + left_out + output[-half:]
    ending = "interrupted" if code is None else f"exit code {code}"
    return (
        f"I ran this command myself in the workspace ({ending}):\n"
        f"<bash-input>{command}</bash-input>\n<bash-output>{output.rstrip()}</bash-output>"
    )


def run_and_note(command: str, cwd: Path) -> str | None:
    """Run the ``!`` command typed at the prompt; the note for the next message (``None`` for
    a command that could not start)."""
    if not command:
        click.echo("Type a command after !, e.g. !git status", err=True)
        return None
    try:
        code, output = run_shell(command, cwd)
    except OSError as exc:
        click.echo(f"mycode: cannot run it: {exc.strerror or exc}", err=True)
        return None
    ending = "interrupted" if code is None else f"exit {code}"
    click.echo(click.style(f"({ending}; the model sees it with your next message)", dim=True))
    return shell_note(command, code, output)
