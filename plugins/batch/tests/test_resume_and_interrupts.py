"""--resume after a crash, Ctrl-C once and twice, --max-total-tokens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from batch_helpers import (
    BYPASS,
    command_script,
    folder,
    result_lines,
    results,
    run_batch,
    task,
    write_tasks,
    writer_script,
)

from mycode_core.testing import cli_env, signals_as_in_a_terminal, start_cli, write_script
from mycode_core.testing.host import host_processes, wait_until


def _simple_tasks(tmp_path: Path, count: int, **extra: object) -> Path:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = write_script(tmp_path / "s.json", [{"content": "ok"}])
    return write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": f"t{i}", "prompt": "p", "workspace": "ws", "model": model, **extra}
            for i in range(count)
        ],
    )


def test_resume_skips_recorded_tasks_and_survives_a_cut_last_line(tmp_path: Path) -> None:
    tasks = _simple_tasks(tmp_path, 3)
    out = tmp_path / "out"
    out.mkdir()
    earlier = {
        "id": "t0",
        "stop_reason": "max_steps",
        "verdict": "none",
        "steps": 50,
        "usage": {"input_tokens": 5, "output_tokens": 5},
        "duration_ms": 10,
        "session_id": "s0",
        "patch": str(out / "tasks" / "t0" / "diff.patch"),
    }
    # a crash while t1's line was being written left half a line
    (out / "results.jsonl").write_text(json.dumps(earlier) + '\n{"id": "t1", "stop_', "utf-8")
    run = run_batch(tasks, out, tmp_path / "home", "--resume", "--output-format", "stream-json")
    assert sorted(e["id"] for e in run.of_type("task_start")) == ["t1", "t2"]
    lines = result_lines(out)  # every line parses: the cut one is gone
    assert lines[0]["id"] == "t0" and sorted(r["id"] for r in lines[1:]) == ["t1", "t2"]
    assert lines[0] == earlier  # whatever its outcome, it is kept, not run again
    assert run.rc == 1  # t0 did not complete
    preds = json.loads((out / "preds.json").read_text())
    assert set(preds) == {"t0", "t1", "t2"}
    report = (out / "report.html").read_text()
    assert "t0" in report and "max_steps" in report and "t2" in report


def test_resume_in_a_moved_output_folder_keeps_the_patches(tmp_path: Path) -> None:
    """Records name their diff by absolute path; an output folder copied off a cluster node
    (or renamed) and resumed there still gives preds.json and the report their diffs."""
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "made.txt", "made\n")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("t0", model=model)])
    assert run_batch(tasks, tmp_path / "first", tmp_path / "home", *BYPASS).rc == 0
    moved = tmp_path / "moved"
    (tmp_path / "first").rename(moved)
    run = run_batch(tasks, moved, tmp_path / "home", "--resume")
    assert run.rc == 0, run.stderr
    assert "+made" in json.loads((moved / "preds.json").read_text())["t0"]["model_patch"]
    assert "tool call · write_file" in (moved / "report.html").read_text()


def test_without_resume_an_earlier_results_file_is_replaced(tmp_path: Path) -> None:
    tasks = _simple_tasks(tmp_path, 1)
    out = tmp_path / "out"
    assert run_batch(tasks, out, tmp_path / "home").rc == 0
    assert run_batch(tasks, out, tmp_path / "home").rc == 0
    assert [r["id"] for r in result_lines(out)] == ["t0"]


def test_max_total_tokens_stops_scheduling(tmp_path: Path) -> None:
    tasks = _simple_tasks(tmp_path, 3)
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", "--workers", "1", "--max-total-tokens", "1")
    assert run.rc == 1
    assert list(results(out)) == ["t0"]
    assert "--max-total-tokens 1 reached" in run.stderr
    preds = json.loads((out / "preds.json").read_text())
    assert list(preds) == ["t0"]


def _start_batch(tasks: Path, out: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    flags = [*BYPASS, "--output-format", "stream-json", *args]
    return start_cli(["batch", str(tasks), "--out", str(out), *flags], tasks.parent, home)


def _wait_for_starts(proc: subprocess.Popen[str], count: int) -> list[str]:
    assert proc.stdout is not None
    started = []
    deadline = time.monotonic() + 120
    while len(started) < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        event = json.loads(line)
        if event["type"] == "task_start":
            started.append(event["id"])
    return started


def _sleeper_tasks(tmp_path: Path, seconds: int, count: int) -> Path:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = command_script(tmp_path / "sleep.json", f"sleep {seconds} && echo slept > s.txt")
    return write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": "p", "workspace": "ws", "model": model} for i in range(count)],
    )


def _wait_for_transcripts(out: Path, ids: list[str]) -> None:
    """Until each running task's ``mycode`` process has started its session."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(
            (out / "tasks" / i / "transcript.jsonl").exists()
            and "tool_call" in (out / "tasks" / i / "transcript.jsonl").read_text()
            for i in ids
        ):
            return
        time.sleep(0.2)


def _two_running(tmp_path: Path, seconds: int, count: int) -> tuple[subprocess.Popen[str], Path]:
    """A batch of ``count`` sleeping tasks on two workers, once both first tasks are running."""
    tasks = _sleeper_tasks(tmp_path, seconds, count)
    out = tmp_path / "out"
    proc = _start_batch(tasks, out, tmp_path / "home", "--workers", "2")
    started = _wait_for_starts(proc, 2)
    assert started == ["t0", "t1"]
    _wait_for_transcripts(out, started)
    return proc, out


def _left_of(tmp_path: Path) -> list[str]:
    """The processes of the sleeping tasks still running (their ``mycode`` or their command)."""
    left = []
    for pattern in (str(tmp_path / "sleep.json"), "sleep 120 && echo slept"):
        found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
        left += [p for p in found.stdout.split() if int(p) != os.getpid()]
    return left


def _nothing_left_of(tmp_path: Path) -> None:
    """No process of the sleeping tasks is left (their ``mycode`` nor their command)."""
    assert _left_of(tmp_path) == []


def test_first_ctrl_c_lets_running_tasks_finish_and_schedules_no_more(tmp_path: Path) -> None:
    proc, out = _two_running(tmp_path, 3, 4)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130, stderr
    records = results(out)
    assert set(records) == {"t0", "t1"}
    assert all(r["stop_reason"] == "completed" for r in records.values())
    assert "+slept" in Path(records["t0"]["patch"]).read_text()
    assert "task_start" not in stdout  # nothing was started after the Ctrl-C
    assert set(json.loads((out / "preds.json").read_text())) == {"t0", "t1"}
    # and --resume runs the two that never started
    again = run_batch(tmp_path / "tasks.jsonl", out, tmp_path / "home", "--resume", *BYPASS)
    assert again.rc == 0, again.stderr
    assert set(results(out)) == {"t0", "t1", "t2", "t3"}


def test_second_ctrl_c_cancels_running_tasks_and_leaves_them_unrecorded(tmp_path: Path) -> None:
    proc, out = _two_running(tmp_path, 120, 2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    began = time.monotonic()
    stdout, stderr = proc.communicate(timeout=100)
    assert time.monotonic() - began < 100  # it did not wait for the 120 s commands
    assert proc.returncode == 130, stderr
    assert "cancelling the running tasks" in stdout
    assert not (out / "results.jsonl").exists() or results(out) == {}
    assert json.loads((out / "preds.json").read_text()) == {}
    assert (out / "report.html").is_file()
    _nothing_left_of(tmp_path)


def test_sigterm_cancels_running_tasks_and_leaves_nothing_running(tmp_path: Path) -> None:
    """`kill`, `timeout` or a cancelled CI job: the batch ends as after Ctrl-C twice, 143."""
    proc, out = _two_running(tmp_path, 120, 3)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=100)
    assert proc.returncode == 143, stderr
    assert "SIGTERM: cancelling the running tasks" in stdout
    assert not (out / "results.jsonl").exists()
    assert json.loads((out / "preds.json").read_text()) == {}
    assert (out / "report.html").is_file()
    assert not any((out / "tasks" / i / "workspace").exists() for i in ("t0", "t1"))
    _nothing_left_of(tmp_path)


def test_a_sigkilled_batch_leaves_nothing_running(tmp_path: Path) -> None:
    """``kill -9`` of the batch (a lost CI runner, the OOM killer): its running tasks, their
    ``mycode`` and their commands, no longer go on to their end on their own."""
    proc, _out = _two_running(tmp_path, 120, 2)
    proc.kill()
    proc.wait(timeout=60)
    assert wait_until(lambda: not _left_of(tmp_path), 30), _left_of(tmp_path)
    assert wait_until(lambda: not host_processes(str(tmp_path)), 30)  # the warm server too


def test_preds_json_is_up_to_date_while_the_batch_runs(tmp_path: Path) -> None:
    """As mini-swe-agent keeps it: what ended is in preds.json even if the batch is killed."""
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    quick = write_script(tmp_path / "q.json", [{"content": "ok"}])
    slow = command_script(tmp_path / "sleep.json", "sleep 120 && echo slept > s.txt")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("slow", model=slow), task("quick", model=quick)],
    )
    out = tmp_path / "out"
    proc = _start_batch(tasks, out, tmp_path / "home", "--workers", "2")
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "task_end":
                break
        assert event["id"] == "quick"
        assert set(json.loads((out / "preds.json").read_text())) == {"quick"}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=100)


def test_on_a_terminal_progress_is_a_live_display(tmp_path: Path) -> None:
    import pty

    tasks = _simple_tasks(tmp_path, 2)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mycode_core", "batch", str(tasks), "--out", str(tmp_path / "o")],
        cwd=tmp_path,
        env={**cli_env(tmp_path / "home"), "TERM": "xterm", "COLUMNS": "120"},
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        preexec_fn=signals_as_in_a_terminal,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        shown += chunk
    proc.communicate(timeout=120)
    os.close(master)
    screen = shown.decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "\x1b[" in screen  # drawn with terminal control sequences
    assert "done" in screen and "running" in screen and "eta" in screen
    assert "batch: start" not in screen  # not the plain lines of a pipe
