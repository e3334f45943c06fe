"""Warm starts: tasks forked from a server with mycode loaded give what cold starts give."""

from __future__ import annotations

from pathlib import Path

import psutil
from batch_helpers import BYPASS, folder, results, run_batch, write_tasks, writer_script

from mycode_core.testing import write_plugin_dist

VOLATILE = ("duration_ms", "session_id", "patch")


def _fork_servers(home: Path) -> set[int]:
    """Fork servers started by batches whose ``MYCODE_HOME`` is ``home`` (not other runs')."""
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        if "multiprocessing.forkserver" not in " ".join(proc.info["cmdline"] or ()):
            continue
        try:
            if proc.environ().get("MYCODE_HOME") == str(home):
                found.add(proc.pid)
        except psutil.Error:
            continue
    return found


def test_warm_and_cold_starts_give_the_same_results_and_nothing_stays(tmp_path: Path) -> None:
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": f"t{i}",
                "prompt": f"task {i}",
                "workspace": "ws",
                "model": writer_script(tmp_path / f"s{i}.json", f"n{i}.txt", f"n{i}\n"),
            }
            for i in range(3)
        ],
    )
    runs = {}
    for mode, env in (("warm", {}), ("cold", {"MYCODE_BATCH_WARM": "0"})):
        run = run_batch(tasks, tmp_path / mode, tmp_path / "home", *BYPASS, env=env)
        assert run.rc == 0, run.stderr
        runs[mode] = {
            k: {f: v for f, v in r.items() if f not in VOLATILE}
            for k, r in results(tmp_path / mode).items()
        }
        log = (tmp_path / mode / "tasks" / "t1" / "log.txt").read_text(encoding="utf-8")
        assert ("forked warm" in log) == (mode == "warm"), log
        # each task its own session, in its own MYCODE_HOME
        assert len(list((tmp_path / mode / "tasks" / "t2" / "home" / "sessions").iterdir())) == 1
        patch = (tmp_path / mode / "tasks" / "t2" / "diff.patch").read_text(encoding="utf-8")
        assert "+n2" in patch and "n1" not in patch
    assert runs["warm"] == runs["cold"]
    assert {r["stop_reason"] for r in runs["warm"].values()} == {"completed"}
    assert _fork_servers(tmp_path / "home") == set()  # the fork server went with the batch


def test_a_third_party_plugin_is_imported_by_each_task_itself(tmp_path: Path) -> None:
    site = tmp_path / "site"
    seen = tmp_path / "imports.txt"
    write_plugin_dist(
        site,
        "importer",
        "import os\n"
        f"with open({str(seen)!r}, 'a') as fh:\n"
        "    fh.write(os.environ.get('MYCODE_HOME', '?') + '\\n')\n",
    )
    folder(tmp_path / "ws", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": f"t{i}",
                "prompt": "p",
                "workspace": "ws",
                "model": writer_script(tmp_path / f"s{i}.json", f"n{i}.txt", "n\n"),
            }
            for i in range(2)
        ],
    )
    out = tmp_path / "out"
    run = run_batch(
        tasks,
        out,
        tmp_path / "home",
        *BYPASS,
        env={"PYTHONPATH": str(site)},
    )
    assert run.rc == 0, run.stderr
    assert "forked warm" in (out / "tasks" / "t0" / "log.txt").read_text(encoding="utf-8")
    homes = seen.read_text(encoding="utf-8").splitlines()
    # at import time each task saw its own MYCODE_HOME: the import ran in the task
    for task in ("t0", "t1"):
        assert str(out / "tasks" / task / "home") in homes
