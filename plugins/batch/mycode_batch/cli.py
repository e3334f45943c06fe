"""``mycode batch TASKS.jsonl --out DIR``: the command (SPEC §10).

Only ``click`` is imported at module level; this module is loaded when the CLI is built.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

PERMISSION_MODES = ("default", "accept-edits", "plan", "bypass")
USAGE_ERROR = 2


def _fail(message: str) -> None:
    click.echo(f"mycode batch: error: {message}", err=True)
    sys.exit(USAGE_ERROR)


def _flags(options: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    for name, flag in (
        ("model", "--model"),
        ("base_url", "--base-url"),
        ("max_steps", "--max-steps"),
        ("max_tokens", "--max-tokens"),
        ("max_budget_usd", "--max-budget-usd"),
        ("permission_mode", "--permission-mode"),
        ("completion_policy", "--completion-policy"),
    ):
        if options.get(name) is not None:
            flags += [flag, str(options[name])]
    if options.get("trust"):
        flags.append("--trust")
    for path in options.get("mcp_config") or ():
        flags += ["--mcp-config", str(Path(path).resolve())]
    for path in options.get("plugin_dirs") or ():
        flags += ["--plugin-dir", str(Path(path).resolve())]
    for name, flag in (("allow_rules", "--allow"), ("deny_rules", "--deny")):
        for rule in options.get(name) or ():
            flags += [flag, rule]
    return flags


def _user_env() -> dict[str, str]:
    """The model settings of this shell (``MYCODE_*``, ``OPENAI_*``: key, endpoint, model,
    plugins) for every run: a Ray worker has the environment of whoever started the cluster."""
    return {
        k: v
        for k, v in os.environ.items()
        if k.startswith(("MYCODE_", "OPENAI_")) and k != "MYCODE_HOME"
    }


def _resources(raw: str | None) -> dict[str, float]:
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        _fail(f'--ray-resources must be a JSON object like {{"GPU": 1}}, got {raw!r}')
    if not isinstance(data, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()
    ):
        _fail(f'--ray-resources must map names to numbers, like {{"GPU": 1}}, got {raw!r}')
    return {str(k): float(v) for k, v in data.items()}


def _summary_table(records: list[dict[str, Any]], to_stderr: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from mycode_batch.outputs import totals

    table = Table(title="mycode batch")
    for column in ("id", "stop reason", "verdict", "steps", "tokens", "time"):
        table.add_column(
            column, justify="right" if column in ("steps", "tokens", "time") else "left"
        )
    for r in records:
        usage = r.get("usage") or {}
        tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
        style = "green" if r.get("stop_reason") == "completed" else "red"
        table.add_row(
            str(r["id"]),
            f"[{style}]{r.get('stop_reason')}[/]",
            str(r.get("verdict")),
            str(r.get("steps")),
            f"{tokens:,}",
            f"{int(r.get('duration_ms') or 0) / 1000:.1f}s",
        )
    total = totals(records)
    table.add_section()
    table.add_row(
        f"{total['tasks']} tasks",
        f"{total['completed']} completed",
        f"{total['failed']} not",
        "",
        f"{total['total_tokens']:,}",
        f"{total['duration_ms'] / 1000:.1f}s",
    )
    Console(stderr=to_stderr, soft_wrap=False).print(table)


def batch_command() -> click.Command:
    """Build the ``batch`` command."""

    @click.command(name="batch")
    @click.argument("tasks_file", metavar="TASKS.jsonl", type=click.Path(dir_okay=False))
    @click.option(
        "--out",
        "out_dir",
        required=True,
        type=click.Path(file_okay=False),
        help="Output folder (results.jsonl, preds.json, tasks/, report.html).",
    )
    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=4,
        show_default=True,
        help="Tasks running at once.",
    )
    @click.option(
        "--executor",
        type=click.Choice(("local", "ray")),
        default="local",
        show_default=True,
        help="local: a pool on this machine; ray: Ray tasks.",
    )
    @click.option(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster (HOST:PORT, auto or ray://...); default: a local Ray.",
    )
    @click.option(
        "--ray-num-cpus",
        type=click.FloatRange(min=0),
        default=1.0,
        show_default=True,
        help="CPUs each Ray task asks for.",
    )
    @click.option(
        "--ray-resources",
        metavar="JSON",
        help='Other resources each Ray task asks for, e.g. {"GPU": 1}.',
    )
    @click.option("--resume", is_flag=True, help="Skip tasks already in results.jsonl.")
    @click.option(
        "--retry-failed",
        is_flag=True,
        help="With --resume: run again the tasks that did not complete.",
    )
    @click.option(
        "--skip-invalid",
        is_flag=True,
        help="Skip lines that are no task (each is reported) instead of stopping before any "
        "task runs.",
    )
    @click.option(
        "--task-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=1800.0,
        show_default=True,
        help="Wall-clock limit of one task, seconds (setup included).",
    )
    @click.option(
        "--max-total-tokens",
        type=click.IntRange(min=1),
        help="Stop starting tasks once the batch used this many tokens.",
    )
    @click.option(
        "--keep-workspaces", is_flag=True, help="Keep each task's copy under tasks/<id>/workspace."
    )
    @click.option(
        "--output-format",
        type=click.Choice(("text", "json", "stream-json")),
        default="text",
        show_default=True,
        help="text: progress and a summary table; json: one summary object; "
        "stream-json: one event per task start and end.",
    )
    @click.option("--model", envvar="MYCODE_MODEL", help="Model id for every task.")
    @click.option("--base-url", help="OpenAI-compatible endpoint.")
    @click.option("--api-key", help="API key (given to each run through its environment).")
    @click.option("--max-steps", type=click.IntRange(min=1), help="Cap on ReAct steps per task.")
    @click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget per task.")
    @click.option(
        "--max-budget-usd",
        type=click.FloatRange(min=0),
        help="End a task's run once its cost passes this many USD.",
    )
    @click.option(
        "--trust",
        is_flag=True,
        help="Trust each task's copy for its run: its project config, hooks and MCP servers "
        "apply as they are (SPEC §8).",
    )
    @click.option(
        "--permission-mode",
        type=click.Choice(PERMISSION_MODES),
        help="Permission mode of every run.",
    )
    @click.option("--completion-policy", metavar="POLICY", help="Completion gate policy.")
    @click.option(
        "--allow",
        "--allowedTools",
        "allow_rules",
        multiple=True,
        metavar="RULE",
        help="A permission rule every run allows without asking (repeatable; as for a run).",
    )
    @click.option(
        "--deny",
        "--disallowedTools",
        "deny_rules",
        multiple=True,
        metavar="RULE",
        help="A permission rule every run refuses (repeatable; as for a run).",
    )
    @click.option(
        "--mcp-config",
        multiple=True,
        type=click.Path(dir_okay=False),
        help="MCP servers file for every run.",
    )
    @click.option(
        "--plugin-dir",
        "plugin_dirs",
        multiple=True,
        type=click.Path(file_okay=False, exists=True),
        help="A plugin folder (Claude Code, Codex, Agent Plugins) for every run (repeatable).",
    )
    def batch(tasks_file: str, out_dir: str, **options: Any) -> None:
        """Run the agent over a JSONL file of tasks, locally or on Ray (SPEC §10)."""
        sys.exit(run_command(Path(tasks_file), Path(out_dir), options))

    return batch


def run_command(tasks_file: Path, out_dir: Path, options: dict[str, Any]) -> int:
    """Validate, run, summarise; return the exit code."""
    from mycode_batch.tasks import load_tasks

    if not tasks_file.is_file():
        _fail(f"{tasks_file}: no such task file")
    if options["retry_failed"] and not options["resume"]:
        _fail("--retry-failed goes with --resume")
    if options["ray_address"] and options["executor"] != "ray":
        _fail("--ray-address needs --executor ray")
    for path in options["mcp_config"]:
        if not Path(path).is_file():
            _fail(f"--mcp-config {path}: no such file")
    resources = _resources(options["ray_resources"])
    try:
        loaded = load_tasks(tasks_file)
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{tasks_file}: cannot read it ({exc})")
    for line in loaded.duplicates + loaded.errors:
        click.echo(f"mycode batch: {line}", err=True)
    if loaded.duplicates:  # nothing runs: which of the two tasks did the user mean?
        _fail(f"{len(loaded.duplicates)} duplicate task id(s); ids must be unique")
    if loaded.errors and not options["skip_invalid"]:  # before any task spends anything
        _fail(f"{len(loaded.errors)} problem(s) in {tasks_file}; fix them or use --skip-invalid")
    for task in loaded.tasks:
        if task.problem:
            click.echo(f"mycode batch: {tasks_file}:{task.line}: {task.problem}", err=True)
    if not loaded.tasks:
        _fail(f"{tasks_file}: no tasks to run")
    out = out_dir.expanduser().resolve()
    if out.exists() and not out.is_dir():
        _fail(f"--out {out} is not a folder")
    return _run(loaded.tasks, out, options, resources, loaded.errors)


def _run(
    tasks: list[Any],
    out: Path,
    options: dict[str, Any],
    resources: dict[str, float],
    invalid: list[str],
) -> int:
    from mycode_batch.executors import ExecutorError, LocalExecutor, RayExecutor
    from mycode_batch.progress import make_progress
    from mycode_batch.runner import BatchOptions, run_batch
    from mycode_core.config import home_dir

    env = _user_env()
    if options["api_key"]:
        env["MYCODE_API_KEY"] = options["api_key"]
    template = {
        "flags": _flags(options),
        "env": env,
        "user_home": str(home_dir()),
        "timeout": float(options["task_timeout"]),
        "keep_workspace": bool(options["keep_workspaces"]),
        "python": sys.executable,
    }
    batch_options = BatchOptions(
        out=out,
        workers=options["workers"],
        resume=options["resume"],
        retry_failed=options["retry_failed"],
        max_total_tokens=options["max_total_tokens"],
        model=options["model"],
        spec_template=template,
        invalid=invalid,
    )

    def factory() -> Any:
        if options["executor"] == "ray":
            return RayExecutor(
                address=options["ray_address"],
                workers=options["workers"],
                num_cpus=options["ray_num_cpus"],
                resources=resources,
            )
        return LocalExecutor(options["workers"])

    fmt = options["output_format"]
    progress = make_progress(fmt)
    try:
        outcome = run_batch(tasks, batch_options, factory, progress)
    except ExecutorError as exc:
        _fail(str(exc))
    if fmt == "json":
        from mycode_batch.outputs import totals

        summary = {
            **totals(outcome.records),
            "not_run": outcome.not_run,
            "invalid": invalid,
            "exit_code": outcome.exit_code,
            "out": str(out),
        }
        click.echo(json.dumps(summary))
    else:
        _summary_table(outcome.records, to_stderr=fmt == "stream-json")
        if fmt == "text":
            click.echo(f"results: {out / 'results.jsonl'}\nreport:  {out / 'report.html'}")
    if outcome.not_run and fmt != "stream-json":
        click.echo(f"not run: {len(outcome.not_run)} task(s); run again with --resume", err=True)
    if invalid and fmt != "stream-json":
        click.echo(f"skipped: {len(invalid)} line(s) of the task file (listed above)", err=True)
    return outcome.exit_code
