"""Real batches on the local executor: copies, setup, outputs, failures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from batch_helpers import (
    BYPASS,
    command_script,
    folder,
    git_repo,
    head,
    results,
    run_batch,
    task,
    write_tasks,
    writer_script,
)

from mycode_core.testing import write_script


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (``.git`` included) with its content."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_three_kinds_of_workspace_each_run_on_a_copy(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "gitws", {"src.py": "x = 1\n"})
    plain = folder(tmp_path / "plain", {"notes.txt": "n\n"})
    upstream = git_repo(tmp_path / "upstream", {"v.txt": "one\n"})
    first = head(upstream)
    (upstream / "v.txt").write_text("two\n", encoding="utf-8")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "2"],
        cwd=upstream,
        check=True,
    )
    edit = write_script(
        tmp_path / "edit.json",
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "src.py"}}]},
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "src.py",
                            "old_string": "x = 1",
                            "new_string": "x = 2",
                        },
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "added.txt", "content": "untracked\n"},
                    }
                ]
            },
            {"content": "edited"},
        ],
    )
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "git", "prompt": "edit src", "workspace": "gitws", "model": edit},
            {
                "id": "plain",
                "prompt": "add",
                "workspace": "plain",
                "model": writer_script(tmp_path / "w.json", "made.txt", "made\n", final="made it"),
            },
            {
                "id": "clone",
                "prompt": "show",
                "repo": str(upstream),
                "commit": first,
                "setup": "cat v.txt > seen.txt",
                "model": command_script(tmp_path / "c.json", "cat seen.txt >> v.txt"),
            },
        ],
    )
    sources = {path: _files(path) for path in (repo, plain, upstream)}
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS, "--workers", "2")
    assert run.rc == 0, run.stderr
    records = results(out)
    assert set(records) == {"git", "plain", "clone"}
    for task_id, r in records.items():
        assert r["stop_reason"] == "completed" and r["verdict"] in ("pass", "unverified")
        assert r["steps"] >= 2 and r["duration_ms"] > 0 and r["session_id"]
        assert set(r["usage"]) >= {"input_tokens", "output_tokens"}
        task_dir = out / "tasks" / task_id
        assert Path(r["patch"]) == task_dir / "diff.patch"
        for name in ("transcript.jsonl", "diff.patch", "final.txt", "log.txt"):
            assert (task_dir / name).is_file(), name
        # the run's own MYCODE_HOME under the output folder holds its session
        assert (task_dir / "home" / "sessions" / f"{r['session_id']}.jsonl").is_file()
    # nothing was written into the originals, their .git included (no objects, no worktrees)
    assert {path: _files(path) for path in sources} == sources
    preds = json.loads((out / "preds.json").read_text())
    assert set(preds) == {"git", "plain", "clone"}
    git_patch = preds["git"]["model_patch"]
    assert preds["git"]["instance_id"] == "git"
    assert preds["git"]["model_name_or_path"] == f"scripted:{tmp_path / 'edit.json'}"
    assert "-x = 1" in git_patch and "+x = 2" in git_patch
    assert "+++ b/added.txt" in git_patch  # untracked files are part of the patch
    assert "+++ b/made.txt" in preds["plain"]["model_patch"]
    clone_patch = preds["clone"]["model_patch"]
    # checked out at `commit`, setup ran first and is not part of the patch
    assert "+one" in clone_patch and "seen.txt" not in clone_patch
    assert git_patch == (out / "tasks" / "git" / "diff.patch").read_text()
    assert (out / "tasks" / "plain" / "final.txt").read_text() == "made it"
    # summary table on stdout: id, stop reason, verdict, steps, tokens, time
    for word in ("stop reason", "verdict", "steps", "tokens", "git", "plain", "clone"):
        assert word in run.stdout
    assert (out / "report.html").is_file()


def test_failures_are_recorded_and_the_batch_goes_on(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    ok = writer_script(tmp_path / "ok.json", "b.txt", "b\n")
    hang = command_script(tmp_path / "hang.json", "sleep 120")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            task("setup-fails", setup="exit 3", model=ok),
            task("hangs", timeout=4, model=hang),
            {
                "id": "clone-fails",
                "prompt": "p",
                "repo": "https://127.0.0.1:9/none.git",
                "model": ok,
            },
            task("fine", model=ok),
        ],
    )
    out = tmp_path / "out"
    run = run_batch(
        tasks,
        out,
        tmp_path / "home",
        *BYPASS,
        "--output-format",
        "stream-json",
        timeout=200,
    )
    assert run.rc == 1, run.stderr
    records = results(out)
    assert records["setup-fails"]["stop_reason"] == "setup_failed"
    assert "exited with 3" in records["setup-fails"]["error"]
    assert records["hangs"]["stop_reason"] == "timeout"
    assert records["hangs"]["duration_ms"] < 100_000  # killed at its limit, not after sleep
    assert records["clone-fails"]["stop_reason"] == "error"
    assert "could not make the copy" in records["clone-fails"]["error"]
    assert records["fine"]["stop_reason"] == "completed"
    assert "Traceback" not in run.stderr
    # stream-json: one start and one end event per task, the summary last
    starts = [e["id"] for e in run.of_type("task_start")]
    ends = [e["id"] for e in run.of_type("task_end")]
    assert sorted(starts) == sorted(ends) == sorted(records)
    assert run.events[0]["type"] == "batch_start" and run.events[-1]["type"] == "batch_result"
    assert run.events[-1]["completed"] == 1 and run.events[-1]["tasks"] == 4


def test_user_flags_reach_every_run(tmp_path: Path) -> None:
    from mycode_core.testing import FakeOpenAIServer, turn

    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": f"task number {i}", "workspace": "ws"} for i in range(2)],
    )
    write_call = {"name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}
    usage = {"prompt_tokens": 7, "completion_tokens": 2}
    replies = [
        turn(tool_calls=[write_call], usage=usage),
        turn("first", usage=usage),
        turn(tool_calls=[write_call], usage=usage),
        turn("second", usage=usage),
    ]
    with FakeOpenAIServer(replies) as server:
        run = run_batch(
            tasks,
            tmp_path / "out",
            tmp_path / "home",
            "--workers",
            "1",
            "--model",
            "served-model",
            "--base-url",
            server.base_url,
            "--api-key",
            "sk-batch",
            "--permission-mode",
            "plan",
            "--max-steps",
            "5",
        )
        requests = server.chat_requests
    assert run.rc == 0, run.stderr
    assert len(requests) == 4
    assert {r.body["model"] for r in requests} == {"served-model"}
    assert {r.headers.get("authorization") for r in requests} == {"Bearer sk-batch"}
    prompts = [m["content"] for r in requests for m in r.messages if m["role"] == "user"]
    assert "task number 0" in prompts and "task number 1" in prompts
    records = results(tmp_path / "out")
    # plan mode: the write was refused, so no patch
    assert all(Path(r["patch"]).read_text() == "" for r in records.values())
    assert records["t0"]["usage"] == {"input_tokens": 14, "output_tokens": 4}
    assert "sk-batch" not in (tmp_path / "out" / "tasks" / "t0" / "log.txt").read_text()


def test_a_model_server_that_is_down_fails_tasks_cleanly_then_resume_retries(
    tmp_path: Path,
) -> None:
    from mycode_core.testing import FAST_RETRY_CONFIG, FakeOpenAIServer

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(FAST_RETRY_CONFIG, encoding="utf-8")  # the user's config
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": "p", "workspace": "ws"} for i in range(2)],
    )
    server = FakeOpenAIServer().start()
    dead = server.base_url
    server.stop()
    out = tmp_path / "out"
    common = ["--model", "m", "--api-key", "k", "--permission-mode", "bypass"]
    down = run_batch(tasks, out, home, *common, "--base-url", dead)
    assert down.rc == 1
    assert {r["stop_reason"] for r in results(out).values()} == {"model_error"}
    with FakeOpenAIServer() as live:
        again = run_batch(
            tasks, out, home, *common, "--base-url", live.base_url, "--resume", "--retry-failed"
        )
    assert again.rc == 0, again.stderr
    assert {r["stop_reason"] for r in results(out).values()} == {"completed"}


def test_an_output_folder_inside_the_workspace_is_not_copied(tmp_path: Path) -> None:
    ws = folder(tmp_path / "proj", {"main.py": "print(1)\n"})
    model = writer_script(tmp_path / "w.json", "n.txt", "n\n")
    tasks = write_tasks(
        ws / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": "p", "workspace": ".", "model": model} for i in range(2)],
    )
    out = ws / "runs"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS)
    assert run.rc == 0, run.stderr
    for r in results(out).values():
        patch = Path(r["patch"]).read_text()
        assert "+++ b/n.txt" in patch and "runs/" not in patch


def test_a_dirty_or_empty_git_workspace_is_copied_as_it_is(tmp_path: Path) -> None:
    dirty = git_repo(tmp_path / "dirty", {"a.txt": "committed\n"})
    (dirty / "a.txt").write_text("uncommitted edit\n", encoding="utf-8")
    (dirty / "new.txt").write_text("untracked\n", encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=empty, check=True)
    (empty / "b.txt").write_text("never committed\n", encoding="utf-8")
    see = command_script(tmp_path / "c.json", "cat *.txt > seen.log")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "dirty", "prompt": "p", "workspace": "dirty", "model": see},
            {"id": "empty", "prompt": "p", "workspace": "empty", "model": see},
        ],
    )
    out = tmp_path / "out"
    run = run_batch(tasks, out, tmp_path / "home", *BYPASS)
    assert run.rc == 0, run.stderr
    preds = json.loads((out / "preds.json").read_text())
    # the run saw the workspace as it is, and only its own change is in the patch
    assert "+uncommitted edit" in preds["dirty"]["model_patch"]
    assert "+untracked" in preds["dirty"]["model_patch"]
    assert preds["dirty"]["model_patch"].count("diff --git") == 1  # seen.log only
    assert "+never committed" in preds["empty"]["model_patch"]
    assert (dirty / "a.txt").read_text() == "uncommitted edit\n"
    assert not (dirty / "seen.log").exists() and not (empty / "seen.log").exists()


def test_allow_and_deny_rules_reach_every_run(tmp_path: Path) -> None:
    from mycode_core.testing import FakeOpenAIServer, turn

    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "t0", "prompt": "write", "workspace": "ws"}]
    )
    write_call = {"name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}
    with FakeOpenAIServer([turn(tool_calls=[write_call]), turn("done")]) as server:
        run = run_batch(
            tasks, tmp_path / "out", tmp_path / "home", "--model", "m", "--base-url",
            server.base_url, "--api-key", "k", "--disallowedTools", "Write",
            "--allow", "Bash(make:*)",
        )  # fmt: skip
        tool_message = [m for m in server.chat_requests[1].messages if m["role"] == "tool"]
    assert run.rc == 0, run.stderr
    assert Path(results(tmp_path / "out")["t0"]["patch"]).read_text() == ""  # refused
    assert "write_file" in str(tool_message) and "denied" in str(tool_message).lower()


def test_trust_and_max_budget_usd_reach_every_run(tmp_path: Path) -> None:
    from mycode_core.testing import FakeOpenAIServer, turn

    folder(tmp_path / "ws", {"f.txt": "f\n", ".mycode/config.toml": ALLOW_RM})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [task("rm", model=command_script(tmp_path / "rm.json", "rm f.txt"))],
    )
    trusted = run_batch(tasks, tmp_path / "out", tmp_path / "home", "--trust")
    assert trusted.rc == 0, trusted.stderr
    # the copy's own allow rule applied: without --trust it may only make things stricter
    assert "deleted file mode" in Path(results(tmp_path / "out")["rm"]["patch"]).read_text()
    home = folder(tmp_path / "home", {"config.toml": '[models."priced"]\ninput_per_mtok = 1e6\n'})
    usage = {"prompt_tokens": 10, "completion_tokens": 1}
    write_call = {"name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}
    with FakeOpenAIServer([turn(tool_calls=[write_call], usage=usage)] * 3) as server:
        flags = ["--model", "priced", "--base-url", server.base_url, "--api-key", "k"]
        plain = write_tasks(tmp_path / "plain.jsonl", [task("w")])
        capped = run_batch(plain, tmp_path / "out2", home, *flags, *BYPASS, "--max-budget-usd", "5")
    assert capped.rc == 1, capped.stderr
    assert results(tmp_path / "out2")["w"]["stop_reason"] == "token_budget"


ALLOW_RM = '[permissions]\nallow = ["run_command(rm:*)"]\n'


def test_plugin_dirs_reach_every_run(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    plugin = folder(
        tmp_path / "my plugin",
        {
            ".claude-plugin/plugin.json": '{"name": "mine", "version": "1.0.0"}',
            "skills/hello/SKILL.md": "---\nname: hello\ndescription: greets\n---\nHello body\n",
        },
    )
    load = [{"tool_calls": [{"name": "load_skill", "arguments": {"name": "hello"}}]}]
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [task("t", model=write_script(tmp_path / "s.json", load))]
    )
    run = run_batch(tasks, tmp_path / "out", tmp_path / "home", "--plugin-dir", str(plugin))
    assert run.rc == 0, run.stderr
    transcript = (tmp_path / "out" / "tasks" / "t" / "transcript.jsonl").read_text()
    assert "Hello body" in transcript


def test_commit_may_be_a_branch_of_the_repository(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "upstream", {"a.txt": "a\n"})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "checkout", "-qb", "feature"], cwd=repo, check=True)
    folder(repo, {"b.txt": "b\n"})
    subprocess.run([*git, "add", "b.txt"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "b"], cwd=repo, check=True)
    subprocess.run([*git, "checkout", "-q", "-"], cwd=repo, check=True)  # HEAD: without b.txt
    model = writer_script(tmp_path / "s.json", "c.txt", "c\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": "f", "prompt": "p", "repo": "upstream", "commit": "feature", "model": model,
          "setup": "test -f b.txt"}],
    )  # fmt: skip
    run = run_batch(tasks, tmp_path / "out", tmp_path / "home", *BYPASS)
    assert run.rc == 0, run.stderr
    assert "+++ b/c.txt" in Path(results(tmp_path / "out")["f"]["patch"]).read_text()


def test_a_kept_workspace_outlives_its_source_repository(tmp_path: Path) -> None:
    import shutil

    git_repo(tmp_path / "src", {"a.txt": "a\n"})
    model = writer_script(tmp_path / "s.json", "b.txt", "b\n")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task("k", "src", model=model)])
    run = run_batch(tasks, tmp_path / "out", tmp_path / "home", *BYPASS, "--keep-workspaces")
    assert run.rc == 0, run.stderr
    shutil.rmtree(tmp_path / "src")
    kept = tmp_path / "out" / "tasks" / "k" / "workspace"
    log = subprocess.run(["git", "log", "-p"], cwd=kept, capture_output=True, text=True)
    assert log.returncode == 0 and "+a" in log.stdout, log.stderr
    assert (kept / "b.txt").read_text() == "b\n"
