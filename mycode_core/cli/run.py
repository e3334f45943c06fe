"""Starting an agent run from command-line options: settings, plugins, session, output."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from mycode_core.claude_rules import split_rules
from mycode_core.cli.tool_check import no_tools_problem

USAGE_ERROR = 2


PLUGIN_DIR_LOADER = "claude_compat"
"""The plugin of this repository that reads ``--plugin-dir`` folders (Claude Code plugins)."""


EXIT_CODES: dict[str, int] = {"completed": 0, "interrupted": 130}


def exit_code_for(stop_reason: str) -> int:
    """SPEC §2 exit code for a stop reason."""
    return EXIT_CODES.get(stop_reason, 1)


def flag_rules(**kinds: tuple[str, ...]) -> dict[str, list[str]]:
    """``--allow`` / ``--deny`` values as the permission rules of the ``cli`` layer (Claude
    Code's names read as mycode's); a value that is no rule is a ``ValueError``."""
    from mycode_core.claude_rules import mycode_rule

    table: dict[str, list[str]] = {}
    for kind, values in kinds.items():
        for raw in (rule for value in values for rule in split_rules(value)):
            rule = mycode_rule(raw)
            if rule is None:
                raise ValueError(f"--{kind} {raw!r}: not a rule (write TOOL or TOOL(pattern))")
            table.setdefault(kind, []).append(rule)
    return table


def _fail(message: str) -> int:
    click.echo(f"mycode: error: {message}", err=True)
    return USAGE_ERROR


PIPE_WAIT = 1.0
"""With a PROMPT given, how long to wait for piped input to start (an idle pipe left open by
a calling program must not hang the run)."""


def _read_stdin(wait: float | None = None) -> str:
    """Piped or redirected stdin, decoded leniently; ``""`` for a terminal or nothing.

    ``wait`` (seconds) bounds the wait for a pipe's first bytes; ``None`` waits as long as the
    writer takes (stdin is then the task itself)."""
    import select
    import stat

    if sys.stdin is None or sys.stdin.closed or sys.stdin.isatty():
        return ""
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            return ""
        if wait is not None and stat.S_ISFIFO(mode):
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return ""
        data = sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        return ""
    return data.decode("utf-8", "replace").strip()


def _print_recap(session_id: str, events: list[dict[str, Any]]) -> None:
    """A short recap of the session being resumed (stderr: it is not the answer)."""
    from mycode_core.cli.session_view import build_timeline, recap_lines

    for line in recap_lines(build_timeline(session_id, events)):
        click.echo(click.style(line, dim=True), err=True)


def _unpriced_budget(settings: Any) -> str | None:
    """The notice for a cost budget no price can enforce (a local model has none)."""
    from mycode_core.pricing import price_for

    model, budget = str(settings.model or ""), settings.max_budget_usd
    if budget is None or price_for(model, dict(settings.models or {})) is not None:
        return None
    return (
        f"--max-budget-usd {budget:g} is not enforced: the price of model {model!r} is unknown "
        f'(set input_per_mtok and output_per_mtok under [models."{model}"] in config.toml)'
    )


def _command_reply(runner: Any, text: str, renderer: Any, failed: int = 0) -> int:
    """Show a slash command's reply in a machine format (``json``: the ``result`` object;
    ``stream-json``: ``system`` ... ``result``), close the run; returns the exit code
    (``failed``: the command's own, when it failed)."""
    from mycode_core.cli.output_lost import OutputLost

    try:
        events = runner.command_turn(text, failed=bool(failed))
        try:
            for event in events:
                renderer.handle(event)
        except OSError as exc:  # the reply is in the transcript
            raise OutputLost(exc, str(runner.session_id)) from None
    finally:
        renderer.close()
        runner.close()
    if runner.guard.strict_failure:
        return USAGE_ERROR
    result = next(event for event in reversed(events) if event.type == "result")
    return failed or exit_code_for(result.stop_reason)  # type: ignore[attr-defined]


def _plugin_names(pm: Any) -> list[str]:
    """Loaded plugins and every installed entry point (a disabled plugin's table is known)."""
    from mycode_core.cli.plugin_rows import installed_plugin_names

    return [name for name, _ in pm.list_name_plugin()] + installed_plugin_names()


def run_agent(
    prompt: str,
    *,
    print_mode: bool,
    output_format: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    cwd: str | None,
    max_steps: int | None,
    max_tokens: int | None,
    permission_mode: str | None,
    completion_policy: str | None,
    mcp_config: tuple[str, ...],
    plugin_dir: tuple[str, ...] = (),
    resume_id: str | None,
    continue_latest: bool,
    trust_workspace: bool = False,
    max_budget_usd: float | None = None,
    json_schema: str | None = None,
    allow_rules: tuple[str, ...] = (),
    deny_rules: tuple[str, ...] = (),
    append_system_prompt: str | None = None,
) -> int:
    """Run the agent; return the process exit code (SPEC §2)."""
    from mycode_core.entry_scan import scan_for_startup

    scan_for_startup()  # before the first model is built (pydantic scans then)
    from mycode_core.cli.mentions import expand
    from mycode_core.cli.options import mcp_config_values
    from mycode_core.cli.rewind import rewound
    from mycode_core.cli.session_lock import busy_line, claim_session
    from mycode_core.cli.transcript_history import elsewhere_notice, history_from_events
    from mycode_core.config import (
        ConfigError,
        ensure_home,
        home_dir,
        load_settings,
        unusable_home,
    )
    from mycode_core.config_check import settings_tables
    from mycode_core.errors import SetupError
    from mycode_core.plugins import PluginLoadError, get_plugin_manager
    from mycode_core.runtime.child import run_child
    from mycode_core.runtime.hookcalls import strict_from
    from mycode_core.runtime.loop import AgentRunner
    from mycode_core.sessions import SessionStore, new_session_id

    schema = None
    if json_schema is not None:
        from mycode_core.cli.structured import SchemaError, StructuredOutput, load_schema

        if not print_mode:
            return _fail("--json-schema needs -p (print mode)")
        from mycode_core.cli.schema_refs import unresolved_ref

        try:
            schema = load_schema(json_schema)
        except SchemaError as exc:
            return _fail(str(exc))
        if (dangling := unresolved_ref(schema)) is not None:
            return _fail(f"--json-schema: {dangling}")
    workspace = Path(cwd or os.getcwd()).expanduser()
    if not workspace.is_dir():
        return _fail(f"--cwd {workspace} is not a folder")
    workspace = workspace.resolve()
    home = home_dir()
    try:
        ensure_home(home)
    except ConfigError as exc:
        return _fail(str(exc))
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    interactive = not print_mode and tty and output_format == "text"
    if not interactive and not prompt:
        prompt = _read_stdin()
    elif not interactive:
        piped = _read_stdin(wait=PIPE_WAIT)  # `echo log | mycode -p "why?"`: prompt, then input
        if piped:
            prompt = f"{prompt}\n\n{piped}"
    if not interactive and not prompt and not continue_latest and not resume_id:
        return _fail('no prompt given: run `mycode -p "your task"` or pipe the task on stdin')
    try:
        mcp_files = mcp_config_values(mcp_config)
    except ValueError as exc:
        return _fail(str(exc))
    try:
        permissions = flag_rules(allow=allow_rules, deny=deny_rules)
    except ValueError as exc:
        return _fail(str(exc))
    cli: dict[str, Any] = {
        "model": model,
        "base_url": base_url,
        "api_key": api_key,
        "max_steps": max_steps,
        "max_tokens": max_tokens,
        "max_budget_usd": max_budget_usd,
        "permission_mode": permission_mode,
        "mcp_config_files": mcp_files or None,
        "trust_workspace": True if trust_workspace else None,
        "plugin_dirs": [str(Path(p).expanduser().resolve()) for p in plugin_dir] or None,
        "permissions": permissions or None,
        "append_system_prompt": append_system_prompt or None,
    }
    if completion_policy:
        cli["completion_gate"] = {"policy": completion_policy}
    if interactive and not trust_workspace:
        from mycode_core.cli.trust_prompt import ask_once

        if (left := ask_once(workspace, home)) is not None:
            return left
    from mycode_core.cli import schema_cache
    from mycode_core.cli.plugin_rows import strict_from_config

    known_schemas = schema_cache.load(home)
    try:
        pm = get_plugin_manager(
            workspace=workspace,
            trusted=True if trust_workspace else None,
            strict=strict_from_config(workspace, home),
        )
        settings_failures: list[str] = []
        settings = load_settings(
            workspace,
            home,
            cli,
            tables=settings_tables(
                pm,
                lambda message: click.echo(f"mycode: {message}", err=True),
                settings_failures,
            ),
            plugin_names=_plugin_names(pm),
        )
    except (ConfigError, PluginLoadError) as exc:
        return _fail(str(exc))
    if settings_failures and strict_from(settings):  # a failed register_settings (SPEC §7)
        return _fail(f"{settings_failures[0]} ([plugins] strict or MYCODE_STRICT_PLUGINS is set)")
    from mycode_core.cli.slash import names_a_path, split_command

    # `mycode -c -p /diff`: a command needs a model only if it hands the model a prompt
    command_only = not interactive and split_command(prompt) and not names_a_path(prompt)
    if not settings.model and not command_only:  # issue 20: offer the local servers that answer
        from mycode_core.cli import local_models

        servers = local_models.local_servers(configured=settings.base_url, api_key=settings.api_key)
        if not interactive and (line := local_models.no_model_line(servers)):
            return _fail(line)
        picked = local_models.choose(servers, home) if interactive and servers else None
        if picked is not None:
            cli["model"], cli["base_url"] = picked
            try:
                settings = load_settings(
                    workspace, home, cli, tables=settings_tables(pm), plugin_names=_plugin_names(pm)
                )
            except ConfigError as exc:
                return _fail(str(exc))
    if (unpriced := _unpriced_budget(settings)) is not None:
        settings.notices.append(unpriced)
    if plugin_dir and not pm.has_plugin(PLUGIN_DIR_LOADER):
        click.echo(
            f"mycode: --plugin-dir is ignored: no plugin loads plugin folders (install "
            f"./plugins/{PLUGIN_DIR_LOADER}, or enable it if MYCODE_LOAD_PLUGINS or "
            "[plugins] disable leaves it out)",
            err=True,
        )

    store = SessionStore(home)
    prior: list[dict[str, Any]] = []
    session_id = new_session_id()
    resumed = None
    if resume_id or continue_latest:
        if resume_id:
            if not store.exists(resume_id):
                return _fail(f"no session {resume_id!r} (see `mycode sessions`)")
            session_id = resume_id
        else:
            latest = store.latest(str(workspace))
            if latest is None:
                return _fail(f"no earlier session in {workspace} to continue")
            session_id = latest.id
        if not claim_session(home, session_id):  # another live mycode is writing it
            return _fail(busy_line(home, session_id))
        resumed = session_id
        stored = rewound(store.read_events(session_id))
        prior = history_from_events(stored)
        if output_format == "text":
            _print_recap(session_id, stored)
        if (elsewhere := elsewhere_notice(session_id, stored, workspace)) is not None:
            click.echo(f"mycode: {elsewhere}", err=True)  # and an event for stream-json
            if output_format == "stream-json":
                settings.notices.append(elsewhere)
        if not prompt and not interactive:
            prompt = "Continue the task from where the previous run stopped."
    else:
        claim_session(home, session_id)  # a new session: held so no --continue joins it

    from mycode_core.cli.command_run import CommandRunner

    runner = (CommandRunner if command_only else AgentRunner)(
        spawn_child=run_child,
        expand_prompt=expand,
        pm=pm,
        settings=settings,
        workspace=workspace,
        home=home,
        session_id=session_id,
        interactive=interactive,
        ask=None,
        prior_messages=prior,
        resumed_from=resumed,
        answer_check=StructuredOutput(schema) if schema is not None else None,
    )
    if interactive:
        from mycode_core.cli.interactive import InteractiveSession
        from mycode_core.cli.signals import SignalGuard

        session = InteractiveSession(runner, store)

        def wait(seconds: float) -> None:  # the session's runner: /clear and /resume replace it
            worker = session.runner._worker_thread
            if worker is not None:
                worker.join(timeout=seconds)

        showing = lambda: session.renderer is not None  # noqa: E731
        cancel = lambda: session.runner.cancel()  # noqa: E731 - /clear replaces the runner
        with SignalGuard(cancel, wait=wait, asking=session.asking, showing=showing) as guard:
            session.signalled = lambda: guard.received
            return session.run(prompt or None)
    from mycode_core.cli.signals import WITH_CTRL_C, SignalGuard

    with SignalGuard(runner.cancel, signals=WITH_CTRL_C) as guard:
        try:
            runner.prepare()
        except SetupError as exc:
            runner.close()
            return _fail(str(exc))
        except OSError as exc:
            runner.close()
            return _fail(str(unusable_home(home, exc)))
        schema_cache.save(home, known_schemas)
        problem = no_tools_problem(runner)
        if problem is not None:
            runner.close()
            return _fail(problem)
        from mycode_core.cli.output import make_renderer, neutralise, render_turn
        from mycode_core.cli.output_lost import OutputLost
        from mycode_core.cli.slash import dispatch, unknown_command
        from mycode_core.events import NoticeEvent

        slash = dispatch(runner, prompt, lambda message: click.echo(f"mycode: {message}", err=True))
        typed = None  # the command line the user typed, when a slash command expanded it
        command = split_command(prompt) if slash is None and not names_a_path(prompt) else None
        if command is not None:  # as in Claude Code's -p: an unknown command is an error
            for event in runner.events.unread():  # why a command may be missing
                if isinstance(event, NoticeEvent):
                    click.echo(f"mycode: {event.message}", err=True)
            runner.close()
            return _fail(unknown_command(runner, command[0], lambda message: None))
        no_model = getattr(runner, "model_problem", None)
        if slash is not None and slash.prompt and no_model is not None:
            runner.close()  # the command handed the model a prompt: a model is needed after all
            return _fail(str(no_model))
        if slash is not None:
            lines = [slash.output] if slash.output else []
            if slash.rewind:  # `--continue -p "/rewind N"`: the next --resume goes on from there
                from mycode_core.cli.rewind import record

                record(store, session_id, slash.rewind)
                lines.append(f"The conversation is back to before turn {slash.rewind}.")
            code = slash.exit_code  # not 0: the command failed, no turn; exit as its subcommand
            if (code or not slash.prompt) and output_format != "text":  # as the format's events
                return _command_reply(runner, "\n".join(lines), make_renderer(output_format), code)
            try:
                for line in lines:  # text (a failure's on stderr); or stderr, ahead of a turn's
                    shown = f"mycode: {neutralise(line)}" if code else neutralise(line)
                    click.echo(shown, err=bool(code) or output_format != "text")
            except OSError as exc:
                runner.close()
                raise OutputLost(exc, session_id) from None
            if code or not slash.prompt:
                runner.close()
                return USAGE_ERROR if runner.guard.strict_failure else code
            typed, prompt = prompt, slash.prompt
        if guard.received is not None:  # stopped while setting up: no turn starts
            said = "interrupted while starting up: no turn ran"
            if output_format != "text":  # a reader of events still gets `system` ... `result`
                _command_reply(runner, said, make_renderer(output_format), 1)
            else:
                runner.close()
                click.echo(f"mycode: {said}", err=True)
            return guard.exit_code(1)
        try:
            result = render_turn(
                runner,
                prompt,
                make_renderer(output_format),
                cancel_requested=lambda: guard.received is not None,
                request=typed,
            )
        finally:
            runner.close()
    if runner.guard.strict_failure:  # SPEC §7: [plugins] strict turns a plugin failure into 2
        return 2
    if result is None:
        return guard.exit_code(1)
    return guard.exit_code(exit_code_for(result.stop_reason))  # type: ignore[attr-defined]
