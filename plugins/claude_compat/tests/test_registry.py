"""The installed plugins' content hash (``registry.py``): remembered with the files' status,
read again only when a file changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def test_the_start_up_hash_check_reads_files_only_when_their_status_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed plugin's files are hashed at every start-up (a 50 MB plugin cost 0.8 s a
    run): the hash is remembered with the files' status and read again only when a file
    changed — even one written back with its old size and modification time."""
    import time

    from mycode_claude_compat import registry

    home, folder = tmp_path / "home", tmp_path / "home" / "plugins" / "kit"
    (folder / "hooks").mkdir(parents=True)
    (folder / "hooks" / "run.sh").write_text("echo one\n")
    (folder / "big.bin").write_bytes(b"x" * 100_000)
    reads: list[Path] = []
    real_hash = registry.content_hash

    def counted(root: Path) -> str:
        reads.append(root)
        return real_hash(root)

    monkeypatch.setattr(registry, "content_hash", counted)
    later = time.time() + 10 * registry.RACY_SECONDS  # the files are no longer "just written"
    monkeypatch.setattr(registry.time, "time", lambda: later)
    first = registry.checked_hash(folder, home)
    assert first == real_hash(folder) and len(reads) == 1
    assert registry.checked_hash(folder, home) == first and len(reads) == 1  # from the cache

    script = folder / "hooks" / "run.sh"
    before = script.stat()
    script.write_text("echo two\n")  # same size
    os.utime(script, ns=(before.st_atime_ns, before.st_mtime_ns))  # same modification time
    assert registry.checked_hash(folder, home) != first and len(reads) == 2


def test_a_folder_changed_just_now_is_not_remembered(tmp_path: Path) -> None:
    """A change within the clock tick of the check could go unseen: such a folder's hash is
    not kept, so the next start-up reads its files again."""
    from mycode_claude_compat import registry

    home, folder = tmp_path / "home", tmp_path / "kit"
    folder.mkdir()
    (folder / "a.txt").write_text("a")
    registry.checked_hash(folder, home)
    assert not home.joinpath(*registry.HASH_CACHE).exists()
