"""The ``mycode`` command line.

``mycode [OPTIONS] [PROMPT]`` runs the agent; ``mycode COMMAND`` runs a subcommand. The module
has no side effects at import and imports nothing heavy: the runtime, pydantic models, openai
and mcp are imported only when a run starts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from mycode_core import __version__
from mycode_core.cli.options import mcp_config_option, plugin_dir_option
from mycode_core.cli.plugin_commands import PluginCommandGroup
from mycode_core.cli.signals import ctrl_c_exits

OUTPUT_FORMATS = ("text", "json", "stream-json")
PERMISSION_MODES = ("default", "accept-edits", "plan", "bypass")


def agent_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a click callback with the options of an agent run (SPEC §2)."""
    options = [
        click.option(
            "-p",
            "--print",
            "print_mode",
            is_flag=True,
            help="Non-interactive: run PROMPT (or stdin) to the end, print the result, exit.",
        ),
        click.option(
            "--output-format",
            type=click.Choice(OUTPUT_FORMATS),
            default="text",
            show_default=True,
            help="text: the answer; json: one result object; stream-json: one JSON event per line.",
        ),
        click.option(
            "--model", envvar="MYCODE_MODEL", help="Model id; scripted:PATH plays a script."
        ),
        click.option(
            "--base-url", help="OpenAI-compatible endpoint (env MYCODE_BASE_URL, OPENAI_BASE_URL)."
        ),
        click.option("--api-key", help="API key (env MYCODE_API_KEY, OPENAI_API_KEY)."),
        click.option(
            "--cwd",
            type=click.Path(file_okay=False),
            help="Workspace root (default: current directory).",
        ),
        click.option(
            "--max-steps",
            "--max-turns",
            "max_steps",
            type=click.IntRange(min=1),
            help="Cap on ReAct steps (default 50).",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget for the run."),
        click.option(
            "--max-budget-usd",
            type=click.FloatRange(min=0),
            help="End the run (stop_reason token_budget) once its cost passes this many USD.",
        ),
        click.option(
            "--permission-mode",
            type=click.Choice(PERMISSION_MODES),
            help="default | accept-edits | plan (read-only) | bypass (no prompts).",
        ),
        click.option(
            "--dangerously-skip-permissions",
            "skip_permissions",
            is_flag=True,
            help="Claude Code's spelling of --permission-mode bypass.",
        ),
        click.option(
            "--verbose",
            is_flag=True,
            hidden=True,
            help="Accepted for Claude Code's scripts: the live view is always on stderr.",
        ),
        click.option(
            "--allow",
            "--allowedTools",
            "--allowed-tools",
            "allow_rules",
            multiple=True,
            metavar="RULE",
            help="Allow what RULE names without asking, for this run: `run_command(git diff:*)`, "
            "`edit_file(src/**)`, Claude Code's `Bash(npm test:*)` or `Edit` (repeatable; "
            "commas or spaces separate several).",
        ),
        click.option(
            "--deny",
            "--disallowedTools",
            "--disallowed-tools",
            "deny_rules",
            multiple=True,
            metavar="RULE",
            help="Refuse what RULE names, for this run (repeatable; as --allow).",
        ),
        click.option(
            "--append-system-prompt",
            metavar="TEXT",
            help="Add TEXT to the end of the system prompt, for this run.",
        ),
        click.option(
            "--completion-policy",
            metavar="POLICY",
            help="Completion gate policy: strict | standard (default) | lenient | off, or the "
            "name of an installed team policy plugin.",
        ),
        click.option(
            "--json-schema",
            "json_schema",
            metavar="SCHEMA",
            help="-p only: a JSON Schema (file or inline JSON) the final answer must satisfy; "
            "result.structured_output holds the parsed answer.",
        ),
        mcp_config_option(
            "MCP servers: a file or inline JSON (.mcp.json shape); its servers are trusted."
        ),
        click.option(
            "--trust",
            "trust_workspace",
            is_flag=True,
            help="Trust this workspace for this run (its config may loosen safety).",
        ),
        plugin_dir_option(
            "Load a plugin folder: Claude Code, Codex, Agent Plugins (repeatable).", "plugin_dir"
        ),
        click.option("-r", "--resume", "resume_id", metavar="ID", help="Resume a session by id."),
        click.option(
            "-c",
            "--continue",
            "continue_latest",
            is_flag=True,
            help="Continue the latest session in this workspace.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _run_from_click(prompt_words: Sequence[str], **options: Any) -> None:
    from mycode_core import tokens
    from mycode_core.cli.output_lost import OutputLost
    from mycode_core.cli.run import run_agent

    options.pop("verbose", None)
    if options.pop("skip_permissions", False):
        if options.get("permission_mode") not in (None, "bypass"):
            raise click.UsageError(
                "--dangerously-skip-permissions is --permission-mode bypass: give one of them"
            )
        options["permission_mode"] = "bypass"

    tokens.defer_loading()  # the tokenizer loads only once the view nears its budget (issue 24)
    try:
        code = run_agent(" ".join(prompt_words).strip(), **options)
    except OutputLost as lost:  # stdout is gone: one line (none for a closed pipe), exit 1
        if (line := lost.line()) is not None:
            click.echo(line, err=True)
        code = 1
    finally:
        tokens.defer_loading(False)
    sys.exit(code)


class MycodeGroup(PluginCommandGroup):
    """A group whose help also lists the agent's own usage; a Ctrl-C that reaches it (while
    plugins import, say) exits 130 with one line."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the group's callback and subcommand (Ctrl-C: exit 130, not click's "Aborted!")."""
        with ctrl_c_exits():
            return super().invoke(ctx)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("mycode", "[OPTIONS] [PROMPT]...\n       mycode COMMAND [ARGS]...")


def build_cli(load_plugins: bool = True) -> click.Group:
    """Build the command group: agent options, core subcommands, then plugin commands."""

    @click.group(
        cls=MycodeGroup,
        invoke_without_command=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    @agent_options
    @click.version_option(
        __version__, "--version", prog_name="mycode", message="%(prog)s %(version)s"
    )
    @click.pass_context
    def cli(ctx: click.Context, **options: Any) -> None:
        """mycode: a plugin-first coding agent for the terminal.

        Run `mycode "task"` (interactive on a terminal), `mycode -p "task"` to run to the end and
        print the result, or `mycode` alone for an interactive session.
        """
        if ctx.invoked_subcommand is None:
            _run_from_click((), **options)
        else:
            forward_options(ctx)

    from mycode_core.cli import commands

    commands.add_core_commands(cli)
    if load_plugins:
        _add_plugin_commands(cli)
    return cli


def forward_options(ctx: click.Context) -> None:
    """Hand the run options typed before a subcommand to it (``mycode --plugin-dir D plugins``
    is ``mycode plugins --plugin-dir D``): each becomes the default of the subcommand's option
    of the same flag (in a command group, of each of its commands that has it), so the
    subcommand's own value still wins. An option the subcommand has no use for is one line on
    stderr, never silently dropped."""
    name = ctx.invoked_subcommand
    group = ctx.command
    if not name or not isinstance(group, click.Group):
        return
    sub = group.get_command(ctx, name)
    if sub is None:
        return
    defaults: dict[str, Any] = {}
    ignored: list[str] = []
    for param in group.params:
        if not isinstance(param, click.Option) or param.name is None:
            continue
        if ctx.get_parameter_source(param.name) is not click.core.ParameterSource.COMMANDLINE:
            continue
        if not _default_for(sub, ctx, param, ctx.params[param.name], defaults):
            ignored.append(param.opts[-1])
    if defaults:
        ctx.default_map = {name: defaults}
    if ignored:
        given = ", ".join(ignored)
        click.echo(
            f"mycode: `mycode {name}` does not take {given}: ignored (options of a run go with "
            f"a prompt; see `mycode {name} --help`)",
            err=True,
        )


def _default_for(
    command: click.Command,
    ctx: click.Context,
    given: click.Option,
    value: Any,
    defaults: dict[str, Any],
) -> bool:
    """Record ``value`` as the default of ``command``'s option sharing a flag with ``given``
    (or of its commands' options, for a group); whether any took it."""
    taken = False
    for param in command.params:
        if isinstance(param, click.Option) and param.name and set(param.opts) & set(given.opts):
            defaults[param.name] = list(value) if isinstance(value, tuple) else value
            taken = True
    if isinstance(command, click.Group):
        for child_name in command.list_commands(ctx):
            child = command.get_command(ctx, child_name)
            child_defaults: dict[str, Any] = {}
            if child is not None and _default_for(child, ctx, given, value, child_defaults):
                defaults.setdefault(child_name, {}).update(child_defaults)
                taken = True
    return taken


def _add_plugin_commands(cli: click.Group) -> None:
    from mycode_core.cli.commands import PluginConfigError
    from mycode_core.cli.plugin_commands import add_plugin_commands, save_command_cache
    from mycode_core.cli.plugin_rows import strict_from_config
    from mycode_core.plugins import PluginLoadError, get_plugin_manager

    try:
        pm = get_plugin_manager(strict=strict_from_config())
    except PluginLoadError as exc:
        raise PluginConfigError(str(exc)) from None
    assert isinstance(cli, PluginCommandGroup)

    def notice(message: str) -> None:
        click.echo(f"mycode: {message}", err=True)

    add_plugin_commands(cli, pm, notice)
    save_command_cache(cli, pm)


class PromptCommand(click.Command):
    """The agent's own command; a Ctrl-C that reaches it exits 130 with one line."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command (Ctrl-C: exit 130, not click's "Aborted!")."""
        with ctrl_c_exits():
            return super().invoke(ctx)


def build_prompt_command() -> click.Command:
    """The agent as a plain command with a PROMPT argument (options may follow the prompt)."""

    @click.command(
        name="mycode", cls=PromptCommand, context_settings={"help_option_names": ["-h", "--help"]}
    )
    @agent_options
    @click.argument("prompt", nargs=-1)
    def prompt_command(prompt: tuple[str, ...], **options: Any) -> None:
        _run_from_click(prompt, **options)

    return prompt_command


def _value_options(command: click.Command) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and not param.count:
            names.update(param.opts)
    return names


def first_positional(args: Sequence[str], value_options: set[str]) -> str | None:
    """The first argument that is neither an option nor an option's value."""
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--":
            return args[index + 1] if index + 1 < len(args) else None
        if arg.startswith("-") and len(arg) > 1:
            if "=" not in arg and arg in value_options:
                skip = True
            continue
        return arg
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (a Ctrl-C while starting up: one line, exit 130)."""
    with ctrl_c_exits():
        _main(argv)


def _main(argv: Sequence[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    prompt_command = build_prompt_command()
    first = first_positional(args, _value_options(prompt_command))
    if first is None:
        # a run without a prompt (interactive / stdin), or --help / --version: plugin commands
        # matter only for the help text, which a cache serves without importing plugins
        cli = build_cli(load_plugins=False)
        if any(arg in ("-h", "--help") for arg in args):
            _add_listed_plugin_commands(cli)
        cli.main(args=args, prog_name="mycode")
        return
    from mycode_core.cli.command_cache import CORE_COMMANDS

    if first in CORE_COMMANDS:
        build_cli(load_plugins=False).main(args=args, prog_name="mycode")
        return
    if " " in first or _surely_a_task(first):  # a task: plugin commands are not needed
        prompt_command.main(args=args, prog_name="mycode")
        return
    try:
        cli = build_cli()
    except click.ClickException as exc:  # a plugin failed to load in strict mode
        exc.show()
        sys.exit(exc.exit_code)
    if first in cli.commands:
        _run_plugin_command(cli, args, first)
        return
    _refuse_missing_command(cli, first)
    prompt_command.main(args=args, prog_name="mycode")


def _surely_a_task(word: str) -> bool:
    """Whether the fresh command cache says no plugin has (or had) a command ``word``, so the
    plugins need not be imported twice (once for their commands, once for the run)."""
    from mycode_core.cli import command_cache

    cached = command_cache.load()
    if cached is None or any(name == word for name, _ in cached):
        return False
    return command_cache.known_command(word) is None


def _run_plugin_command(cli: click.Group, args: list[str], name: str) -> None:
    """Run a plugin's subcommand; if it raises, one line naming the plugin (exit 1) and the
    traceback in ``$MYCODE_HOME/logs/plugin-errors.log``."""
    plugin = getattr(cli, "command_plugins", {}).get(name)
    try:
        cli.main(args=args, prog_name="mycode")
    except Exception as exc:
        if plugin is None:
            raise
        from mycode_core.cli.plugin_commands import log_failure

        log = log_failure(f"command {name!r} of plugin {plugin!r}", exc)
        from mycode_core.errors import error_line

        where = f" (traceback in {log})" if log is not None else ""
        click.echo(
            f"mycode: command {name!r} of plugin {plugin!r} failed: {error_line(exc)}{where}",
            err=True,
        )
        sys.exit(1)


def _refuse_missing_command(cli: click.Group, name: str) -> None:
    """Exit 2 when ``name`` is the command of a plugin that is not loaded now (never a task)."""
    from mycode_core.cli.plugin_commands import missing_command

    pm = getattr(cli, "plugin_manager", None)
    loaded = {plugin for plugin, _ in pm.list_name_plugin()} if pm is not None else set()
    why = missing_command(name, loaded)
    if why is not None:
        click.echo(f"mycode: error: {why}", err=True)
        sys.exit(2)


def _add_listed_plugin_commands(cli: click.Group) -> None:
    from mycode_core.cli import command_cache

    cached = command_cache.load()
    if cached is None:
        _add_plugin_commands(cli)
        return
    for name, short_help in cached:
        if name not in cli.commands:
            cli.add_command(click.Command(name, short_help=short_help, help=short_help))
