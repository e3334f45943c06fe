"""report.html: self-contained, a row per task, timelines; checked in a real headless browser."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from batch_helpers import BYPASS, folder, run_batch, task, write_tasks, writer_script
from mycode_batch.report import render_report

from mycode_core.testing.host import find_chromium, headless_chromium


def _browser(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    binary = find_chromium()
    assert binary is not None
    return headless_chromium(binary, args, profile)


class _Dom(HTMLParser):
    """Counts of what the browser's DOM holds."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.details: list[str] = []
        self.timeline_items = 0
        self.external: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and "task-row" in (values.get("class") or ""):
            self.rows.append(tag)
        if tag == "details":
            self.details.append(values.get("id") or "")
        if tag == "li" and values.get("class"):
            self.timeline_items += 1
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            value = values.get(key) or ""
            if value and not value.startswith("#"):
                self.external.append(value)


def _records(tmp_path: Path) -> list[dict[str, object]]:
    task_dir = tmp_path / "tasks" / "a"
    task_dir.mkdir(parents=True)
    events = [
        {"type": "system", "ts": 100.0, "session_id": "s1", "model": "m"},
        {"type": "user", "ts": 100.1, "content": "fix <b>it</b>"},
        {
            "type": "tool_call",
            "ts": 101.0,
            "id": "1",
            "name": "run_command",
            "arguments": {"command": "pytest"},
        },
        {
            "type": "tool_result",
            "ts": 102.0,
            "id": "1",
            "name": "run_command",
            "is_error": True,
            "content": "1 failed",
        },
        {
            "type": "tool_result",
            "ts": 102.5,
            "id": "2",
            "name": "read_file",
            "is_error": False,
            "content": [
                {"type": "text", "text": "shot.png: image/png image"},
                {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgoSECRETBYTES"},
            ],
        },
        {
            "type": "guidance",
            "ts": 103.0,
            "source": "completion_gate",
            "message": "Run the tests before you finish.",
        },
        {"type": "result", "ts": 104.0, "stop_reason": "gate_exhausted", "verdict": "fail"},
    ]
    (task_dir / "transcript.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    (task_dir / "diff.patch").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n")
    return [
        {
            "id": "a",
            "stop_reason": "gate_exhausted",
            "verdict": "fail",
            "steps": 3,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "duration_ms": 4000,
            "session_id": "s1",
            "patch": str(task_dir / "diff.patch"),
            "error": None,
        }
    ]


def test_the_timeline_shows_tool_calls_guidance_and_the_diff(tmp_path: Path) -> None:
    page = render_report(_records(tmp_path), ["b"])
    assert "guidance · completion_gate" in page and "Run the tests before you finish." in page
    assert "tool call · run_command" in page and "tool result · run_command · error" in page
    assert '<span class="add">+new</span>' in page and '<span class="del">-old</span>' in page
    assert "fix &lt;b&gt;it&lt;/b&gt;" in page  # everything is escaped
    assert "+3.0s" in page  # times are relative to the session start
    assert "Not run: b" in page
    assert "shot.png: image/png image\n[image]" in page and "SECRETBYTES" not in page
    assert '<details class="task" id="task-a" open>' in page  # a failed task is open


@pytest.mark.skipif(
    find_chromium() is None, reason="no chromium on this machine (.ci/run installs it)"
)
def test_a_real_batch_report_renders_in_a_headless_browser(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            task("writes", model=writer_script(tmp_path / "w.json", "w.txt", "written line\n")),
            task(
                "broken-setup",
                setup="echo pip says no such package >&2; exit 1",
                model=writer_script(tmp_path / "x.json", "x.txt", "x\n"),
            ),
        ],
    )
    out = tmp_path / "out"
    assert run_batch(tasks, out, tmp_path / "home", *BYPASS).rc == 1
    report = out / "report.html"
    dumped = _browser("--dump-dom", report.as_uri(), profile=tmp_path / "profile")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = _Dom()
    dom.feed(dumped.stdout)
    assert len(dom.rows) == 2
    assert sorted(dom.details) == ["task-broken-setup", "task-writes"]
    assert dom.timeline_items >= 3  # prompt, tool call, tool result, ...
    assert dom.external == [] and dom.scripts == 0  # self-contained
    text = re.sub(r"<[^>]+>", " ", dumped.stdout)
    # a failed setup shows what it printed
    for expected in ("tool call · write_file", "+written line", "setup_failed", "completed",
                     "pip says no such package"):  # fmt: skip
        assert expected in text, expected
    shot = tmp_path / "report.png"
    taken = _browser(
        f"--screenshot={shot}",
        "--window-size=1200,1600",
        report.as_uri(),
        profile=tmp_path / "profile",
    )
    assert taken.returncode == 0 and shot.stat().st_size > 5000
