"""``mycode plugins validate|install|uninstall|update|trust`` (SPEC §11), added to the core's
``plugins`` group from this plugin's ``register_commands`` hook."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click


def _home() -> Path:
    from mycode_core.config import ensure_home, home_dir

    return ensure_home(home_dir())


def _fail(message: str) -> NoReturn:
    click.echo(f"mycode: {message}", err=True)
    sys.exit(1)


@click.command(name="validate")
@click.argument("directory", type=click.Path(file_okay=True, dir_okay=True))
def validate_command(directory: str) -> None:
    """Check a plugin folder: JSON {format, name, fatal, warnings}; exit 1 when fatal."""
    from mycode_claude_compat.install import validate
    from mycode_core.api import get_plugin_manager
    from mycode_core.config import home_dir

    root = Path(directory).expanduser()
    hook = get_plugin_manager().hook if root.is_dir() else None  # the skills' own checks
    report = validate(root.resolve(), home_dir(), hook) if root.is_dir() else None
    if report is None:
        click.echo(f"mycode: {directory} holds no plugin", err=True)
        sys.exit(2)
    click.echo(json.dumps(report, indent=2))
    if report["fatal"]:
        sys.exit(1)


@click.command(name="install")
@click.argument("specs", nargs=-1, required=True)
def install_command(specs: tuple[str, ...]) -> None:
    """Install plugins: a folder, a git repository or URL (#REV pins), a Python
    distribution (requirement, project folder, wheel) or NAME@MARKETPLACE."""
    from mycode_claude_compat.install import InstallError, install_one
    from mycode_claude_compat.marketplaces import Markets

    home = _home()
    with Markets(home) as markets:  # one fetch per marketplace for the whole command
        for spec in specs:
            try:
                done = install_one(spec, home, markets)
            except InstallError as exc:
                if exc.report is not None:
                    click.echo(json.dumps(exc.report, indent=2), err=True)
                _fail(str(exc))
            click.echo(f"installed {done.name} ({done.kind}): {done.detail}")


@click.command(name="uninstall")
@click.argument("names", nargs=-1, required=True)
def uninstall_command(names: tuple[str, ...]) -> None:
    """Remove installed plugins (folder or Python distribution)."""
    from mycode_claude_compat.install import InstallError, uninstall

    home = _home()
    for name in names:
        try:
            click.echo(uninstall(name, home))
        except InstallError as exc:
            _fail(str(exc))


@click.command(name="update")
@click.argument("name", required=False)
@click.option("--yes", is_flag=True, help="Update without asking.")
def update_command(name: str | None, yes: bool) -> None:
    """Fetch installed folder plugins again; show the hash change and ask before replacing."""
    from mycode_claude_compat.marketplaces import Markets
    from mycode_claude_compat.registry import read_registry
    from mycode_claude_compat.update import InstallError, apply_update, keep_files, refetch

    home = _home()
    records = read_registry(home)
    names = [name] if name else sorted(n for n, r in records.items() if r.get("kind") != "python")
    refused = False
    with Markets(home) as markets:  # plugins of one marketplace share one fetch of it
        for item in names:
            try:
                update = refetch(item, home, markets)
            except InstallError as exc:
                click.echo(f"mycode: {exc}", err=True)
                refused = True
                continue
            if update.note:
                click.echo(f"mycode: {item}: {update.note}", err=True)
            moved = f"; now from {update.moved}" if update.moved else ""
            if update.old == update.new:
                keep_files(item, home, update)
                click.echo(f"{item}: up to date ({update.new}){moved}")
                continue
            click.echo(f"{item}: {update.old} -> {update.new}{moved}")
            if not yes:
                if not sys.stdin.isatty():
                    update.staged.discard()
                    click.echo(f"mycode: {item} not updated (not a terminal; use --yes)", err=True)
                    refused = True
                    continue
                if not click.confirm(f"Update {item}?", default=False):
                    update.staged.discard()
                    click.echo(f"{item}: kept")
                    continue
            apply_update(home, update)
            click.echo(f"{item}: updated")
    if refused:
        sys.exit(1)


@click.command(name="trust")
@click.argument("name")
def trust_command(name: str) -> None:
    """Approve an installed folder plugin's current files (after they changed)."""
    from mycode_claude_compat.install import InstallError, trust

    try:
        click.echo(trust(name, _home()))
    except InstallError as exc:
        _fail(str(exc))


@click.group(name="marketplace")
def marketplace_group() -> None:
    """Marketplaces by name: add one, then install NAME@ITS-NAME."""


@marketplace_group.command(name="add")
@click.argument("source")
def marketplace_add(source: str) -> None:
    """Record a marketplace (folder, git repository or URL, or GitHub owner/repo) by its name."""
    from mycode_claude_compat.marketplaces import add_marketplace
    from mycode_claude_compat.placing import InstallError

    try:
        name, where, count = add_marketplace(source, _home())
    except InstallError as exc:
        _fail(str(exc))
        return
    click.echo(f"added marketplace {name} ({count} plugins) from {where}")
    click.echo(f"install from it with: mycode plugins install PLUGIN@{name}")


@marketplace_group.command(name="list")
def marketplace_list() -> None:
    """The added marketplaces (and the ones known without adding)."""
    from mycode_claude_compat.marketplaces import KNOWN, recorded

    for name, source in {**KNOWN, **recorded(_home())}.items():
        click.echo(f"{name}  {source}")


@marketplace_group.command(name="remove")
@click.argument("name")
def marketplace_remove(name: str) -> None:
    """Forget an added marketplace (its installed plugins stay)."""
    from mycode_claude_compat.marketplaces import forget

    if not forget(_home(), name):
        _fail(f"no marketplace named {name!r} was added (see: mycode plugins marketplace list)")
    click.echo(f"removed marketplace {name}")


def add_commands(cli: click.Group) -> None:
    """Add the verbs to ``mycode plugins`` (when the core's group is there)."""
    group = cli.commands.get("plugins")
    if not isinstance(group, click.Group):
        return
    for command in (
        validate_command,
        install_command,
        uninstall_command,
        update_command,
        trust_command,
        marketplace_group,
    ):
        if command.name not in group.commands:
            group.add_command(command)
