"""Ctrl-C while the view is being compacted: the summary request is cut at once and the run
ends ``interrupted`` with its ``result`` (it used to wait out the whole summary, or be killed
after the grace period without one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mycode_core.testing import FakeOpenAIServer, delayed, interrupt_cli, start_cli, turn
from mycode_core.testing.host import wait_until


def test_ctrl_c_during_the_summary_request_ends_the_run_with_its_result(
    workspace: Path, home: Path, h: Any
) -> None:
    (home / "config.toml").write_text("context_window = 6000\n", encoding="utf-8")
    stalled = lambda body: None if body.get("tools") else delayed(600, turn("too late"))  # noqa: E731
    with FakeOpenAIServer(h.read_turns(40), side_responder=stalled) as server:
        args = server.cli_args("TASK: read the files", output_format="stream-json")
        env = {"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"}
        process = start_cli([*args, "--permission-mode", "bypass"], workspace, home, env)

        def summary_asked() -> bool:
            return any(not r.body.get("tools") for r in server.chat_requests)

        ended = interrupt_cli(process, ready=lambda: wait_until(summary_asked, 120), timeout=120)
    assert ended.rc == 130, ended.stderr
    assert ended.result is not None and ended.result["stop_reason"] == "interrupted"
    assert ended.events[-1]["type"] == "result"
    notices = [n["message"] for n in ended.of_type("notice")]
    assert any("summary request failed (interrupted" in m for m in notices), notices
    assert "Traceback" not in ended.stderr


SAVE_CUT_SHORT = """
import resource, sys
import os
import subprocess
import sys
from pathlib import Path
from mycode_context_engine.shaping import save_full_output
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # the disk fills up mid-write
print(save_full_output(sys.argv[2], "call_big", Path(sys.argv[1])))
"""


def test_a_full_output_cut_short_is_never_reused_half_written(tmp_path: Path) -> None:
    """A saved output is written once per call id and reused: one cut short (a crash, a full
    disk) must not stay behind for a resumed run's view to point at."""
    from mycode_context_engine.shaping import save_full_output

    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    content = "".join(f"line {n} of a long command output\n" for n in range(1000))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-c", SAVE_CUT_SHORT, str(artifacts), content]
    cut = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert cut.stdout.strip() == "None", cut.stderr  # the write failed and said so
    saved = save_full_output(content, "call_big", artifacts)
    assert saved is not None and saved.read_text(encoding="utf-8") == content
