"""The task file: validation with line numbers, bad lines skipped, failed copies, duplicate ids."""

from __future__ import annotations

import json
from pathlib import Path

from batch_helpers import BYPASS, folder, git_repo, results, run_batch, write_tasks, writer_script
from mycode_batch.tasks import load_tasks


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "ok", "prompt": "p", "workspace": "ws"},
            "{not json",
            "",
            '["a list"]',
            {"id": "no-prompt", "workspace": "ws"},
            {"id": "both", "prompt": "p", "workspace": "ws", "repo": "ws"},
            {"id": "missing", "prompt": "p", "workspace": "nowhere"},
            {"id": "bad/id", "prompt": "p", "workspace": "ws"},
            {"id": "steps", "prompt": "p", "workspace": "ws", "max_steps": 0},
            {"id": "ok", "prompt": "again", "workspace": "ws"},
            {"id": "opt", "prompt": "p", "repo": "ws", "commit": "--upload-pack=touch x"},
        ],
    )
    loaded = load_tasks(tasks)
    assert [t.id for t in loaded.tasks] == ["ok", "missing"]  # a failed task, not a bad line
    text = "\n".join(loaded.errors)
    assert f"{tasks}:2: not valid JSON" in text
    assert f"{tasks}:4: a task must be a JSON object" in text
    assert f'{tasks}:5: "prompt" must be a non-empty string' in text
    assert f"{tasks}:6: give exactly one of" in text
    assert "nowhere" in str(loaded.tasks[1].problem) and "no such folder" in str(
        loaded.tasks[1].problem
    )
    assert f"{tasks}:8: \"id\" 'bad/id'" in text
    assert f'{tasks}:9: "max_steps"' in text
    assert loaded.duplicates == [f"{tasks}:10: duplicate id 'ok' (first on line 1)"]
    assert f'{tasks}:11: "commit" must name a commit' in text  # never a git option


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    line = '{"id": "ID", "prompt": "p", "workspace": "ws"}\r\n'
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(
        b"\xef\xbb\xbf" + (line.replace("ID", "a") + line.replace("ID", "b")).encode()
    )
    loaded = load_tasks(tasks)
    assert [t.id for t in loaded.tasks] == ["a", "b"] and loaded.errors == []


def test_relative_paths_are_relative_to_the_task_file(tmp_path: Path) -> None:
    git_repo(tmp_path / "sub" / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "sub" / "tasks.jsonl",
        [{"id": "r", "prompt": "p", "repo": "repo", "commit": "HEAD", "swe": {"x": 1}}],
    )
    (task,) = load_tasks(tasks).tasks
    assert task.repo == str((tmp_path / "sub" / "repo").resolve())
    assert task.extra == {"swe": {"x": 1}}
    assert task.line == 1


def test_a_malformed_line_stops_the_batch_unless_skipped(tmp_path: Path) -> None:
    """A line that is no task stops the batch before any task spends anything (exit 2, the
    line named); ``--skip-invalid`` runs the others, and the skipped line does not count."""
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "new.txt", "x\n")
    good = {"id": "good", "prompt": "p", "workspace": "ws", "model": model}
    tasks = write_tasks(tmp_path / "tasks.jsonl", [good, '{"id": "bad"'])
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS)
    assert run.rc == 2 and "fix them or use --skip-invalid" in run.stderr
    assert f"{tasks}:2: not valid JSON" in run.stderr
    assert "Traceback" not in run.stderr and not (out / "results.jsonl").exists()
    again = run_batch(tasks, tmp_path / "out2", tmp_path / "home", *BYPASS, "--skip-invalid")
    assert again.rc == 0, again.stderr
    assert f"{tasks}:2: not valid JSON" in again.stderr
    assert results(tmp_path / "out2")["good"]["stop_reason"] == "completed"


def test_missing_folders_repositories_and_commits_are_failed_tasks(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "new.txt", "x\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "good", "prompt": "p", "workspace": "ws", "model": model},
            {"id": "gone", "prompt": "p", "workspace": "missing-folder", "model": model},
            {"id": "no-repo", "prompt": "p", "repo": "missing-repo", "model": model},
            {"id": "no-url", "prompt": "p", "repo": f"file://{tmp_path}/nope", "model": model},
            {"id": "no-commit", "prompt": "p", "repo": "repo", "commit": "deadbeef"},
        ],
    )
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS)
    assert run.rc == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert f"{tasks}:2:" in run.stderr and "missing-folder" in run.stderr
    records = results(out)
    assert records["good"]["stop_reason"] == "completed"
    errors = {k: r["error"] for k, r in records.items() if k != "good"}
    assert all(records[k]["stop_reason"] == "error" for k in errors)
    assert "no such folder" in errors["gone"] and "no such repository" in errors["no-repo"]
    assert "does not appear to be a git repository" in errors["no-url"]
    assert "commit 'deadbeef' is not in" in errors["no-commit"]
    assert all(e in run.stderr for e in errors.values())  # on each task's end line
    assert set(json.loads((out / "preds.json").read_text())) == set(records)


def test_a_duplicate_id_stops_the_batch_even_with_skip_invalid(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "new.txt", "x\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": "same", "prompt": "p", "workspace": "ws", "model": model}] * 2,
    )
    run = run_batch(tasks, tmp_path / "out", tmp_path / "home", *BYPASS, "--skip-invalid")
    assert run.rc == 2
    assert "duplicate id 'same' (first on line 1)" in run.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "workspace": "ws"}])
    missing = run_batch(tmp_path / "nope.jsonl", tmp_path / "out", tmp_path / "home")
    assert missing.rc == 2 and "no such task file" in missing.stderr
    address = run_batch(tasks, tmp_path / "out", tmp_path / "home", "--ray-address", "x:1")
    assert address.rc == 2 and "--ray-address needs --executor ray" in address.stderr
    retry = run_batch(tasks, tmp_path / "out", tmp_path / "home", "--retry-failed")
    assert retry.rc == 2 and "--retry-failed goes with --resume" in retry.stderr
    for run in (missing, address, retry):
        assert "Traceback" not in run.stderr
