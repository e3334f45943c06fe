"""FIFOs and sockets are refused without being opened, and searches skip them (issue 23)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from mycode_core import safeopen

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def specials(workspace: Path):  # type: ignore[no-untyped-def]
    """A workspace with a FIFO, a listening socket and a regular file, nested too."""
    (workspace / "sub").mkdir()
    os.mkfifo(workspace / "pipe")
    os.mkfifo(workspace / "sub" / "pipe2")
    (workspace / "a.txt").write_text("hello needle\n")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "sock"))
    sock.listen()
    yield workspace
    sock.close()


def test_read_write_edit_refuse_a_fifo(specials: Path, run) -> None:
    for name in ("pipe", "sock"):
        result = run("read_file", path=name)
        assert result.is_error and "not a regular file" in result.text()
    for name in ("pipe", "sock"):
        for result in (run("write_file", path=name, content="x"),
                       run("edit_file", path=name, old_string="a", new_string="b")):  # fmt: skip
            assert result.is_error and "not a regular file" in result.text(), result.text()
    assert stat.S_ISFIFO(os.lstat(specials / "pipe").st_mode)  # not replaced by a file


def test_safeopen_never_opens_or_replaces_a_special_file(specials: Path) -> None:
    with pytest.raises(safeopen.NotRegularFile, match="FIFO"):
        safeopen.open_read(specials / "pipe")
    with pytest.raises(safeopen.NotRegularFile, match="socket"):
        safeopen.read_bytes(specials / "sock")
    with pytest.raises(safeopen.NotRegularFile):
        safeopen.replace_atomically(specials / "pipe", b"x", 0o644, create_parents=False)
    assert stat.S_ISFIFO(os.lstat(specials / "pipe").st_mode)


def test_searches_skip_fifos_and_refuse_one_as_the_path(specials: Path, run) -> None:
    for mode in ("files_with_matches", "content", "count"):
        found = run("grep", pattern="needle", output_mode=mode)
        assert not found.is_error and "a.txt" in found.text(), found.text()
        assert "pipe" not in found.text()
    for target in ("pipe", "sub/pipe2", "sock"):
        for mode in ("files_with_matches", "content"):
            refused = run("grep", pattern="needle", path=target, output_mode=mode)
            assert refused.is_error, (target, mode)
        assert run("glob", pattern="*", path=target).is_error
    listed = run("glob", pattern="**/*")
    assert not listed.is_error and "a.txt" in listed.text()
