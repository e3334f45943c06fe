"""``mycode trust [DIR]``, ``--list`` and ``--revoke``: the user's trust records (SPEC §8)."""

from __future__ import annotations

import json

import click


def make_command() -> click.Command:
    """Build the ``trust`` click command."""

    @click.command("trust")
    @click.argument("folder", required=False, type=click.Path(file_okay=False))
    @click.option("--list", "list_all", is_flag=True, help="List trusted folders (JSON).")
    @click.option("--revoke", is_flag=True, help="Stop trusting FOLDER (default: current).")
    def trust_command(folder: str | None, list_all: bool, revoke: bool) -> None:
        """Trust a workspace: its own config, MCP servers and hooks may then loosen safety."""
        from pathlib import Path

        from mycode_core import trust
        from mycode_core.config import home_dir

        home = home_dir()
        if list_all:
            rows = [{"folder": k, **v} for k, v in sorted(trust.trusted_folders(home).items())]
            click.echo(json.dumps(rows, indent=2))
            return
        target = (Path(folder) if folder else Path.cwd()).expanduser()
        if not target.is_dir():
            raise click.UsageError(f"{target} is not a folder")
        try:
            if revoke:
                done = trust.revoke(target, home)
                click.echo(f"{target.resolve()} {'is no longer' if done else 'was not'} trusted")
                return
            key = trust.trust(target, home)
        except trust.TrustStoreError as exc:
            click.echo(f"mycode: error: {exc.strerror} (errno {exc.errno})", err=True)
            raise SystemExit(1) from None
        click.echo(f"trusted {key} (recorded in {trust.store_file(home)})")

    return trust_command
