"""``mycode demo``: watch the agent fix a real bug in a bundled example project, offline."""

from __future__ import annotations

import difflib
import shutil
import tempfile
from pathlib import Path

import click

DEMO_DIR = Path(__file__).resolve().parent / "demo_project"
DEMO_PROMPT = (
    "The test suite of this project fails. Find the bug, fix it and make sure the tests pass."
)


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def run_demo(keep: bool = False) -> int:
    """Copy the example to a temp folder, run the bundled script on it, print the diff."""
    from mycode_core.cli.run import run_agent
    from mycode_core.plugins import allowed_entry_points

    if "builtin_tools" not in {ep.name for ep in allowed_entry_points()}:
        click.echo(
            "mycode: error: the demo needs the built-in tools: install mycode-builtin-tools "
            "(pip install ./plugins/builtin_tools) and do not disable the plugin",
            err=True,
        )
        return 2
    workspace = Path(tempfile.mkdtemp(prefix="mycode-demo-"))
    try:
        shutil.copytree(DEMO_DIR / "example", workspace, dirs_exist_ok=True)
        before = _snapshot(workspace)
        click.secho(f"mycode demo — workspace {workspace}", bold=True, err=True)
        click.secho(f"task: {DEMO_PROMPT}\n", err=True)
        code = run_agent(
            DEMO_PROMPT,
            print_mode=True,
            output_format="text",
            model=f"scripted:{DEMO_DIR / 'script.json'}",
            base_url=None,
            api_key=None,
            cwd=str(workspace),
            max_steps=None,
            max_tokens=None,
            permission_mode=None,
            completion_policy=None,
            mcp_config=(),
            resume_id=None,
            continue_latest=False,
        )
        after = _snapshot(workspace)
        click.secho("\nThe change:", bold=True)
        for name in sorted(set(before) | set(after)):
            diff = difflib.unified_diff(
                before.get(name, "").splitlines(keepends=True),
                after.get(name, "").splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
            for line in diff:
                colour = (
                    "green" if line.startswith("+") else "red" if line.startswith("-") else None
                )
                click.secho(line.rstrip("\n"), fg=colour)
        return code
    finally:
        if keep:
            click.echo(f"(kept {workspace})", err=True)
        else:
            shutil.rmtree(workspace, ignore_errors=True)
