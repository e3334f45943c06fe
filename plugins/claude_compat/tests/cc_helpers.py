"""Helpers of the claude_compat tests: our own hook script (not Claude Code's), hook files,
and ``mycode -p`` runs in a temporary workspace."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.testing import CliResult, run_cli, write_script

HOOK_SCRIPT = r"""
import json, os, sys, time
log, spec_path = sys.argv[1], sys.argv[2]
raw = sys.stdin.read()
try:
    data = json.loads(raw)
except ValueError:
    data = {"unparsed": raw}
spec = json.load(open(spec_path))
if data.get("stop_hook_active") and "when_active" in spec:
    spec = spec["when_active"]
record = {
    "stdin": data,
    "cwd": os.getcwd(),
    "CLAUDE_PROJECT_DIR": os.environ.get("CLAUDE_PROJECT_DIR"),
    "CLAUDE_PLUGIN_ROOT": os.environ.get("CLAUDE_PLUGIN_ROOT"),
    "PLUGIN_DATA": os.environ.get("PLUGIN_DATA"),
    "CLAUDE_PLUGIN_DATA": os.environ.get("CLAUDE_PLUGIN_DATA"),
    "start": time.time(),
}
if spec.get("grep_transcript"):
    text = open(data["transcript_path"]).read()
    found = spec["grep_transcript"] in text
    record["found"] = found
    if not found:
        spec = {"exit": 2, "stderr": "marker not in the transcript"}
time.sleep(spec.get("sleep", 0))
record["end"] = time.time()
with open(log, "a") as fh:
    fh.write(json.dumps(record) + "\n")
out = spec.get("stdout")
if out is not None:
    sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
if spec.get("big"):
    sys.stdout.write("x" * spec["big"])
if spec.get("stderr"):
    sys.stderr.write(spec["stderr"])
sys.exit(spec.get("exit", 0))
"""


@dataclass
class Env:
    """A workspace, a MYCODE_HOME and the hook commands made for them."""

    root: Path
    workspace: Path = field(init=False)
    home: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = (self.root / "ws").resolve()
        self.home = (self.root / "home").resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.script = self.root / "hook.py"
        self.script.write_text(HOOK_SCRIPT, encoding="utf-8")

    def hook(self, name: str, **spec: Any) -> str:
        """A hook command logging its stdin to ``log(name)`` and answering as ``spec`` says:
        ``exit``, ``stdout`` (text or JSON object), ``stderr``, ``sleep``, ``big`` (bytes of
        junk), ``when_active`` (another spec when ``stop_hook_active``), ``grep_transcript``."""
        spec_path = self.root / f"{name}.spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        return f"{sys.executable} {self.script} {self.log_path(name)} {spec_path}"

    def log_path(self, name: str) -> Path:
        """Where the hook ``name`` logs."""
        return self.root / f"{name}.log.jsonl"

    def log(self, name: str) -> list[dict[str, Any]]:
        """What the hook ``name`` received, one record per run."""
        path = self.log_path(name)
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def trust(self) -> None:
        """Trust the workspace (the plugin's stand-in for ``mycode trust``)."""
        (self.home / "trusted.json").write_text(json.dumps({"workspaces": [str(self.workspace)]}))

    def run(
        self,
        turns: list[dict[str, Any]],
        *args: str,
        prompt: str = "do the task",
        timeout: float = 120,
        env: dict[str, str | None] | None = None,
    ) -> CliResult:
        """``mycode -p PROMPT`` with a scripted model, stream-json, bypass mode."""
        argv = self.argv(turns, *args, prompt=prompt)
        return run_cli(argv, cwd=self.workspace, home=self.home, env=env, timeout=timeout)

    def argv(
        self, turns: list[dict[str, Any]], *args: str, prompt: str = "do the task"
    ) -> list[str]:
        """The arguments of :meth:`run` (for :func:`~mycode_core.testing.start_cli`)."""
        model = write_script(self.root / "script.json", turns)
        flags = ["--output-format", "stream-json", "--permission-mode", "bypass"]
        return ["-p", prompt, "--model", model, *flags, *args]


def hooks_file(path: Path, table: dict[str, list[tuple[str | None, list[Any]]]]) -> Path:
    """Write ``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``; a hook is a command string
    or a dict (``{"command", "timeout"}``)."""
    data: dict[str, Any] = {"hooks": {}}
    for event, groups in table.items():
        entries = []
        for matcher, hooks in groups:
            entry: dict[str, Any] = {
                "hooks": [
                    {"type": "command", "command": h}
                    if isinstance(h, str)
                    else {"type": "command", **h}
                    for h in hooks
                ]
            }
            if matcher is not None:
                entry["matcher"] = matcher
            entries.append(entry)
        data["hooks"][event] = entries
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def bash(command: str, call_id: str | None = None) -> dict[str, Any]:
    """A model turn calling ``run_command``."""
    call: dict[str, Any] = {"name": "run_command", "arguments": {"command": command}}
    if call_id:
        call["id"] = call_id
    return {"tool_calls": [call]}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A model turn calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def notices(result: CliResult) -> list[str]:
    """The notice messages of a run."""
    return [event["message"] for event in result.of_type("notice")]
