"""``mycode skills [--json] [show NAME]``: what a run would list, and why some are missing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from mycode_core.api import plugin_dir_option


def _snapshot(cwd: str | None, plugin_dirs: tuple[str, ...] = ()) -> Any:
    """Discover skills as a run in ``cwd`` would (packages and ``--plugin-dir`` folders
    included)."""
    return _discover(cwd, plugin_dirs)[0]


def _discover(cwd: str | None, plugin_dirs: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """``(snapshot, settings)``: the skills a run in ``cwd`` would find, and its settings."""
    from mycode_core import RunContext
    from mycode_core.api import get_plugin_manager
    from mycode_core.config import ConfigError, home_dir, load_settings
    from mycode_skills.discovery import Catalog, default_locations
    from mycode_skills.state import folder_names_setting, index_file, package_locations

    workspace = Path(cwd or os.getcwd()).resolve()
    home = home_dir()
    try:
        folders = [str(Path(p).expanduser().resolve()) for p in plugin_dirs]
        settings = load_settings(workspace, home, {"plugin_dirs": folders or None})
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    folder_names = folder_names_setting(settings)
    pm = get_plugin_manager()

    def notice(event: Any) -> None:
        click.echo(f"warning: {getattr(event, 'message', event)}", err=True)

    context = RunContext(
        workspace=workspace,
        home=home,
        settings=settings,
        session_id="mycode-skills",
        emit=notice,
        plugin_manager=pm,
    )
    catalog = Catalog(
        default_locations(workspace, home, Path(os.getcwd())),
        extra=lambda: package_locations(pm.hook, context, notice),
        index_file=index_file(home, folder_names),
        folder_names=folder_names,
    )
    return catalog.refresh(), settings


def _row(skill: Any) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source,
        "plugin": skill.source[7:] if skill.source.startswith("plugin:") else None,
        "folder": str(skill.folder),
        "license": skill.license,
        "compatibility": skill.compatibility,
        "allowed_tools": list(skill.allowed_tools) if skill.allowed_tools is not None else None,
        "metadata": skill.metadata,
        "model_invocable": skill.model_invocable,
        "user_invocable": skill.user_invocable,
        "argument_hint": skill.argument_hint,
    }


def _invokers(skill: Any) -> str:
    """Who may invoke ``skill``: the model (``load_skill``), the user (``/NAME``), or both."""
    user = f"you (/{skill.name} {skill.argument_hint})" if skill.user_invocable else ""
    model = "the model (load_skill)" if skill.model_invocable else ""
    return " and ".join(filter(None, (user, model))) or "nobody (both invocations disabled)"


@click.group(name="skills", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--cwd", type=click.Path(file_okay=False), help="Workspace root.")
@plugin_dir_option("Also a plugin folder's skills, as a run with --plugin-dir (repeatable).")
@click.pass_context
def skills_command(
    ctx: click.Context, as_json: bool, cwd: str | None, plugin_dirs: tuple[str, ...]
) -> None:
    """List the skills a run would offer, and the ones not loaded (and why)."""
    ctx.obj = {"json": as_json, "cwd": cwd, "plugin_dirs": plugin_dirs}
    if ctx.invoked_subcommand is not None:
        return
    from mycode_skills.budget import listing_budget, render

    snapshot, settings = _discover(cwd, plugin_dirs)
    skills = snapshot.sorted()
    listed = [s for s in snapshot.skills.values() if s.model_invocable]
    rendered = render(listed, listing_budget(settings))
    if as_json:
        data = {
            "skills": [_row(s) for s in skills],
            "problems": snapshot.said(),
            "listing": rendered.summary(),
        }
        click.echo(json.dumps(data, indent=2, default=str))
        return
    if not skills:
        click.echo("No skills found.")
    width = max((len(s.name) for s in skills), default=0)
    for skill in skills:
        text = skill.description if len(skill.description) <= 80 else skill.description[:79] + "…"
        hidden = "" if skill.model_invocable else " (not for the model: /NAME only)"
        hidden += "" if skill.user_invocable else " (no /NAME: the model's only)"
        click.echo(f"{skill.name:<{width}}  {skill.source:<8} {text}{hidden}")
    for problem in snapshot.said():
        click.echo(f"warning: {problem}", err=True)
    note = rendered.notice()
    if note is not None:
        click.echo(f"note: {note}", err=True)


@skills_command.command(name="show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show_command(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show one skill: its fields, its instructions and its files."""
    from mycode_skills.listing import skill_files
    from mycode_skills.skill import read_body

    options = ctx.obj or {}
    snapshot = _snapshot(options.get("cwd"), options.get("plugin_dirs", ()))
    skill = snapshot.find(name)
    if skill is None:
        available = ", ".join(sorted(snapshot.skills)) or "none"
        raise click.UsageError(f"unknown skill {name!r}; available skills: {available}")
    body, truncated, _size = read_body(skill)
    files, _total = skill_files(skill.folder)
    if as_json or options.get("json"):
        data = {**_row(skill), "body": body, "truncated": truncated, "files": files}
        click.echo(json.dumps(data, indent=2, default=str))
        return
    click.echo(f"{skill.name} ({skill.source}) — {skill.folder}")
    click.echo(skill.description)
    for label, value in (
        ("license", skill.license),
        ("compatibility", skill.compatibility),
        ("allowed-tools", " ".join(skill.allowed_tools) if skill.allowed_tools else None),
        ("invoked by", _invokers(skill)),
    ):
        if value:
            click.echo(f"{label}: {value}")
    click.echo("")
    click.echo(body)
    click.echo("")
    click.echo("Files:")
    for file in files:
        click.echo(f"  {file}")
