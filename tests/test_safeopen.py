"""``replace_atomically``: the project's one atomic write (core and plugins use it)."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from mycode_core import safeopen
from mycode_core.api import replace_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_mode_is_kept_given_or_the_umask_default(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.write_text("old")
    kept.chmod(0o751)
    replace_atomically(kept, b"new")
    assert kept.read_bytes() == b"new" and _mode(kept) == 0o751
    replace_atomically(kept, b"newer", 0o600)
    assert _mode(kept) == 0o600
    umask = os.umask(0o027)
    try:
        replace_atomically(tmp_path / "a" / "fresh", b"x", create_parents=True)
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "a" / "fresh") == 0o640
    assert sorted(os.listdir(tmp_path)) == ["a", "kept"]  # no temporary left


def test_a_stream_is_copied_and_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target, data = tmp_path / "big.bin", os.urandom(3 << 20)
    replace_atomically(target, io.BytesIO(data))
    assert target.read_bytes() == data

    class Broken(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise OSError("disk went away")

    with pytest.raises(OSError, match="disk went away"):
        replace_atomically(target, Broken())
    assert target.read_bytes() == data and os.listdir(tmp_path) == ["big.bin"]


def test_folder_links_are_refused_unless_followed_and_a_final_link_is_replaced(
    tmp_path: Path,
) -> None:
    real, outside = tmp_path / "real", tmp_path / "outside.txt"
    real.mkdir()
    outside.write_text("keep")
    (tmp_path / "home").symlink_to(real)
    (real / "link").symlink_to(outside)
    with pytest.raises(safeopen.SymlinkRace):
        replace_atomically(tmp_path / "home" / "conf.json", b"{}")
    replace_atomically(tmp_path / "home" / "conf.json", b"{}", follow_folder_links=True)
    replace_atomically(tmp_path / "home" / "link", b"mine", follow_folder_links=True)
    assert (real / "conf.json").read_bytes() == b"{}" and outside.read_text() == "keep"
    assert (real / "link").read_bytes() == b"mine" and _mode(real / "link") != 0o777


def test_open_regular_refuses_a_final_link_and_a_fifo_but_follows_linked_folders(
    tmp_path: Path,
) -> None:
    """The read plugins use for small files a command may have swapped (the cwd file, a
    ``.gitmodules``, a ``.git/config``) under a home that may itself be a symlink."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "plain").write_bytes(b"text")
    (tmp_path / "home").symlink_to(real)  # a symlinked MYCODE_HOME still reads
    with safeopen.open_regular(tmp_path / "home" / "plain") as handle:
        assert handle.read() == b"text"
    (real / "link").symlink_to(real / "plain")
    with pytest.raises(OSError):
        safeopen.open_regular(real / "link")
    os.mkfifo(real / "fifo")  # refused at once: no writer, yet nothing waits
    with pytest.raises(safeopen.NotRegularFile, match="FIFO"):
        safeopen.open_regular(real / "fifo")
    with pytest.raises(FileNotFoundError):
        safeopen.open_regular(real / "absent")
