"""Without a sandbox no allowlisted program may run another program unasked: an option that
runs one (``sort --compress-program``, ``rg --pre``), a workspace file named like an allowed
program (``./cat``), names read from a file (``wc --files0-from``). Real ``mycode -p`` runs,
``MYCODE_NO_BWRAP=1``, an untrusted workspace."""

from __future__ import annotations

from pathlib import Path

from mycode_core.testing import run_cli, write_script

SCRIPT = '#!/bin/sh\ntouch "$(dirname "$0")/pwned"\ncat\n'
COMMANDS = [
    "sort -S 1K -T . --compress-program=./z.sh big.txt",
    "sort -S 1K -T . --compress-prog ./z.sh big.txt",
    "sort -S1K -T. --comp=./z.sh big.txt",
    "rg --pre ./z.sh line big.txt",
    "rg --hostname-bin=./z.sh --hyperlink-format=default line big.txt",
    "./cat big.txt",
    "sub/../cat big.txt",
    "wc --files0-from=names",
    "sort --out=copy big.txt",
]


def test_options_and_programs_that_run_workspace_code_ask(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "big.txt").write_text("".join(f"line {n:06}\n" for n in range(20000)))
    for name in ("z.sh", "cat"):
        (workspace / name).write_text(SCRIPT)
        (workspace / name).chmod(0o755)
    (workspace / "names").write_text("big.txt\0")
    turn = {
        "content": "go",
        "tool_calls": [{"name": "run_command", "arguments": {"command": c}} for c in COMMANDS],
    }
    model = write_script(tmp_path / "s.json", [turn, {"content": "done"}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json"]
    run = run_cli(args, workspace, tmp_path / "h", {"MYCODE_NO_BWRAP": "1"}, timeout=120)
    denials = [e for e in run.of_type("permission") if e["decision"] == "deny"]
    assert [d["rule"] for d in denials] == ["builtin:unsandboxed"] * len(COMMANDS), run.stdout
    assert not (workspace / "pwned").exists()
    assert not (workspace / "copy").exists()
    # the same programs without those options still run unasked
    plain = {"content": "go", "tool_calls": [
        {"name": "run_command", "arguments": {"command": "sort -S 1K -T . big.txt | wc -l"}},
        {"name": "run_command", "arguments": {"command": "/usr/bin/env cat names"}},
    ]}  # fmt: skip
    model = write_script(tmp_path / "p.json", [plain, {"content": "done"}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json"]
    run = run_cli(args, workspace, tmp_path / "h", {"MYCODE_NO_BWRAP": "1"}, timeout=120)
    results = run.of_type("tool_result")
    assert [r["is_error"] for r in results] == [False, False], run.stdout
    assert "20000" in results[0]["content"]
