"""The patch of a task includes a change git's stat check alone cannot see."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mycode_batch.sandbox import diff, git

PAST = 1_600_000_000  # a whole second well before now: the checkout's and the edit's


def test_a_same_second_same_size_change_is_in_the_patch(tmp_path: Path) -> None:
    """A file changed in the second of its checkout, its size unchanged, looks clean by its
    stat; git sees it only because the index is no older than the file ("racily clean"). The
    copy of the index the patch starts from keeps that mtime, so the change is found."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("config", "core.checkStat", "minimal")  # whole-second mtime and size only (no ctime)
    target = repo / "a.txt"
    target.write_text("one\n", "utf-8")
    os.utime(target, (PAST, PAST))
    git(["add", "a.txt"], repo)
    git(["commit", "-q", "-m", "start"], repo)
    start = git(["rev-parse", "HEAD^{tree}"], repo).strip()
    target.write_text("two\n", "utf-8")  # same size, and the same second as the checkout:
    os.utime(target, (PAST, PAST))
    os.utime(repo / ".git" / "index", (PAST, PAST))  # the index written in that second too
    patch = diff(repo, start, tmp_path / "private-index")
    assert "-one" in patch and "+two" in patch, patch
