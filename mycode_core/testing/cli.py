"""Running ``mycode`` as a real subprocess, and the files such runs need."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from mycode_core.sessions import json_objects

FAST_RETRY_CONFIG = "retry_base_delay = 0.01\nretry_max_delay = 0.05\n"
"""A ``config.toml`` snippet that makes the runner's retries near-instant."""


def write_script(path: Path, turns: Sequence[Mapping[str, Any]]) -> str:
    """Write a scripted-model file (SPEC §6) and return its ``--model`` id (``scripted:PATH``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(list(turns), indent=1), encoding="utf-8")
    return f"scripted:{path}"


def script_turn(tool: str, **arguments: Any) -> dict[str, Any]:
    """One scripted-model turn (for :func:`write_script`) that calls ``tool`` with ``arguments``."""
    return {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]}


class CliResult(NamedTuple):
    """What a ``mycode`` subprocess did: exit code, parsed stream-json events, raw output."""

    rc: int
    events: list[dict[str, Any]]
    stdout: str
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The events of one ``type``."""
        return [event for event in self.events if event.get("type") == kind]

    @property
    def result(self) -> dict[str, Any] | None:
        """The last ``result`` event, if any."""
        results = self.of_type("result")
        return results[-1] if results else None


ISOLATED_PREFIXES = ("MYCODE_", "OPENAI_")
MACHINE_FACTS = ("MYCODE_NO_BWRAP",)
"""Kept through the isolation: they stand for the machine (``MYCODE_NO_BWRAP=1``: no
bubblewrap here), which the run under test has to see as the test does."""


def cli_env(home: Path, env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment for a test run: ours minus ``MYCODE_*``/``OPENAI_*`` (but
    :data:`MACHINE_FACTS`), a long Ctrl-C exit window, plus ``env``.

    ``MYCODE_HOME`` is ``home``; a ``None`` value in ``env`` removes that variable.
    """
    out = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(ISOLATED_PREFIXES) or k in MACHINE_FACTS
    }
    out["MYCODE_HOME"] = str(home)
    out.setdefault("PYTHONIOENCODING", "utf-8")
    # a test's second Ctrl-C leaves however slow the machine (the 2 s window is for people)
    out["MYCODE_EXIT_CONFIRM_S"] = "600"
    for key, value in (env or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _parse_events(stdout: str) -> list[dict[str, Any]]:
    return list(json_objects(stdout.splitlines()))


def mycode_command(use_script: bool = False) -> list[str]:
    """``[python, -m, mycode_core]``, or the ``mycode`` console script next to the interpreter."""
    if use_script:
        candidate = Path(sys.executable).with_name("mycode")
        if candidate.exists():
            return [str(candidate)]
    return [sys.executable, "-m", "mycode_core"]


def run_cli(
    args: Sequence[str],
    cwd: Path,
    home: Path,
    env: Mapping[str, str | None] | None = None,
    *,
    input: str | None = None,  # noqa: A002 - mirrors subprocess.run
    timeout: float = 60.0,
    use_script: bool = False,
    pythonpath: Sequence[Path] = (),
) -> CliResult:
    """Run ``mycode ARGS`` as a real subprocess in ``cwd`` with ``MYCODE_HOME=home``.

    stdin is ``input`` (or empty); stdout lines that are JSON objects become ``events``.
    ``pythonpath`` folders (e.g. from :func:`write_plugin_dist`) go before ``PYTHONPATH``.
    """
    home.mkdir(parents=True, exist_ok=True)
    environment = cli_env(home, env)
    if pythonpath:
        parts = [str(p) for p in pythonpath]
        if environment.get("PYTHONPATH"):
            parts.append(environment["PYTHONPATH"])
        environment["PYTHONPATH"] = os.pathsep.join(parts)
    completed = subprocess.run(
        [*mycode_command(use_script), *args],
        cwd=str(cwd),
        env=environment,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )
    return CliResult(
        completed.returncode, _parse_events(completed.stdout), completed.stdout, completed.stderr
    )


def start_cli(
    args: Sequence[str],
    cwd: Path,
    home: Path,
    env: Mapping[str, str | None] | None = None,
    **popen: Any,
) -> subprocess.Popen[str]:
    """Start ``mycode ARGS`` in ``cwd`` (``MYCODE_HOME=home``) for a test that signals it.

    stdin is empty, stdout and stderr are text pipes, and SIGINT/SIGHUP are as in a terminal
    (:func:`signals_as_in_a_terminal`); ``popen`` keywords override any of these.
    """
    options: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "text": True,
        "preexec_fn": signals_as_in_a_terminal,
    }
    options.update(popen)
    return subprocess.Popen(
        [*mycode_command(), *args], cwd=str(cwd), env=cli_env(home, env), **options
    )


def interrupt_cli(
    process: subprocess.Popen[Any], *, ready: Callable[[], object], timeout: float
) -> CliResult:
    """Ctrl-C a run :func:`start_cli` started: once ``ready()`` is true (asserted), send SIGINT
    and wait up to ``timeout`` seconds for the run to end; a run still going then (or whose
    ``ready`` failed) is killed. Returns what it did (text even from a binary pipe)."""
    try:
        assert ready(), "the run never got to where the test interrupts it"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
    if isinstance(stdout, bytes):
        stdout, stderr = stdout.decode(), stderr.decode()
    return CliResult(process.returncode, _parse_events(stdout), stdout, stderr)


def signals_as_in_a_terminal() -> None:
    """``preexec_fn`` for a child a test will signal: SIGINT and SIGHUP back to their defaults.

    A process started from a terminal has them; one started under ``nohup`` (SIGHUP) or a
    non-interactive shell's ``cmd &`` (SIGINT) inherits them ignored, and mycode keeps
    ignoring them.
    """
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


def write_user_plugin(home: Path, name: str, source: str) -> Path:
    """Write ``source`` as the single-file plugin ``NAME.py`` in ``home``'s ``plugins`` folder,
    which every run with that ``MYCODE_HOME`` loads (the user's own plugins, trusted).
    Returns the file."""
    folder = home / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def write_plugin_dist(
    site_dir: Path,
    name: str,
    source: str,
    *,
    module: str | None = None,
    version: str = "0.0.1",
    distribution: str | None = None,
) -> Path:
    """Make an installed-looking plugin in ``site_dir``: a module plus a ``.dist-info`` whose
    ``entry_points.txt`` registers ``name`` in group ``mycode``. Put ``site_dir`` on
    ``PYTHONPATH`` and mycode finds it like any installed plugin. Returns the module file.
    """
    module = module or f"mycode_test_{name}"
    distribution = distribution or f"mycode-test-{name}".replace("_", "-")
    site_dir.mkdir(parents=True, exist_ok=True)
    module_file = site_dir / f"{module}.py"
    module_file.write_text(source, encoding="utf-8")
    info = site_dir / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[mycode]\n{name} = {module}\n", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return module_file
