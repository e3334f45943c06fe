"""``mycode sessions`` (list) and ``mycode sessions show ID [--html FILE]`` (a timeline)."""

from __future__ import annotations

import json
import os
import sys

import click


class _SessionError(click.ClickException):
    """A usage problem with a session id or a file (exit code 2)."""

    exit_code = 2


def sessions_group() -> click.Group:
    """The ``sessions`` command group; without a subcommand it lists sessions."""

    @click.group(name="sessions", invoke_without_command=True)
    @click.option(
        "--cwd", type=click.Path(file_okay=False), help="Only sessions of this workspace."
    )
    @click.option("--all", "show_all", is_flag=True, help="Sessions of every workspace.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_context
    def sessions(ctx: click.Context, cwd: str | None, show_all: bool, as_json: bool) -> None:
        """List stored sessions, newest first (this workspace unless --all); `sessions show ID`
        prints one as a timeline."""
        if ctx.invoked_subcommand is not None:
            return
        _list(cwd, show_all, as_json)

    @sessions.command(name="show")
    @click.argument("session_id", metavar="ID")
    @click.option(
        "--html",
        "html_file",
        type=click.Path(dir_okay=False, writable=True),
        help="Write a self-contained HTML page of the session to FILE.",
    )
    def show(session_id: str, html_file: str | None) -> None:
        """Print a session as a timeline: tasks, steps, tool calls, diffs, guidance, tokens."""
        from mycode_core.cli.session_view import build_timeline, render_timeline
        from mycode_core.config import home_dir
        from mycode_core.sessions import SessionStore

        store = SessionStore(home_dir())
        if not store.exists(session_id):
            raise _SessionError(f"no session {session_id!r} (see `mycode sessions --all`)")
        try:
            events = store.read_events(session_id)
        except OSError as exc:
            raise _SessionError(f"cannot read session {session_id!r}: {exc}") from None
        if html_file:
            from pathlib import Path

            from mycode_core.cli.session_html import write_session_page

            target = Path(html_file)
            try:
                write_session_page(session_id, events, target)
            except OSError as exc:
                raise _SessionError(f"cannot write {target}: {exc.strerror or exc}") from None
            click.echo(f"wrote {target}", err=True)
            return
        from rich.console import Console

        from mycode_core.cli.richtext import safe_stream

        timeline = build_timeline(session_id, events)
        render_timeline(timeline, Console(file=safe_stream(sys.stdout), highlight=False))

    return sessions


def _list(cwd: str | None, show_all: bool, as_json: bool) -> None:
    from pathlib import Path

    from mycode_core.cli.session_view import when
    from mycode_core.config import home_dir
    from mycode_core.sessions import SessionStore

    workspace = None if show_all else str(Path(cwd or os.getcwd()).resolve())
    sessions = SessionStore(home_dir()).list(workspace)
    if as_json:
        rows = [
            {
                "id": s.id,
                "cwd": s.cwd,
                "model": s.model,
                "started": s.started,
                "stop_reason": s.stop_reason,
                "prompt": s.first_prompt,
            }
            for s in sessions
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    if not sessions:
        click.echo("No sessions yet." + ("" if show_all else " (use --all for every workspace)"))
        return
    from mycode_core.cli.output import neutralise

    for s in sessions:  # a transcript's text never drives the terminal
        prompt = " ".join(s.first_prompt.split())[:60]
        line = f"{s.id}  {when(s.started)}  {str(s.stop_reason or 'open'):<15} {prompt}"
        click.echo(neutralise(line))
