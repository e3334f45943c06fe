"""Opening files without following symlinks anywhere on the path (``openat``-style walking):
a symlink swapped in after the boundary check must not redirect the open, so each component
is opened with ``O_NOFOLLOW`` from ``/`` and a symlink fails with :class:`SymlinkRace`."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


class SymlinkRace(OSError):
    """A path component turned into a symlink (or stopped being a folder) after the check."""


def _open_at(parent: int, name: str, flags: int, path: Path, mode: int = 0o777) -> int:
    """``os.open`` of ``name`` in the folder ``parent``; a symlink there raises
    :class:`SymlinkRace` (``flags`` hold ``O_NOFOLLOW``)."""
    try:
        return os.open(name, flags, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            if link:
                message = f"{path}: {name} is a symlink; it is not followed"
                raise SymlinkRace(exc.errno, message) from exc
        raise


@contextlib.contextmanager
def open_parent(path: Path, *, create: bool = False) -> Iterator[int]:
    """A descriptor of ``path``'s folder, no symlink followed; ``create`` makes missing ones."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in Path(os.path.abspath(path)).parts[1:-1]:
            try:
                nxt = _open_at(fd, name, _DIR_FLAGS, path)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nxt = _open_at(fd, name, _DIR_FLAGS, path)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def open_fd(path: Path, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """``os.open`` of ``path`` with no symlink followed on the way or at the end."""
    with open_parent(path) as parent:
        return _open_at(parent, Path(path).name, flags | os.O_NOFOLLOW | _CLOEXEC, path, mode)


_KINDS = {"p": "a FIFO (named pipe)", "s": "a socket", "d": "a folder", "l": "a symlink"}


def kind_of(mode: int) -> str:
    """A readable name for a file type (``FIFO (named pipe)``, ``socket``, ``device``…)."""
    letter = stat.filemode(mode)[0]  # the file type as ``ls -l`` shows it
    return "a device" if letter in "bc" else _KINDS.get(letter, "not a regular file")


class NotRegularFile(IsADirectoryError):
    """The path is a FIFO, socket, device or folder: refused without being opened."""


def _not_regular(path: Path, mode: int) -> NotRegularFile:
    return NotRegularFile(
        errno.EINVAL, f"{path} is {kind_of(mode)}, not a regular file; not opened"
    )


def refuse_special(path: Path) -> None:
    """Raise :class:`NotRegularFile` when ``path`` exists and is not a regular file, found
    with ``lstat`` only (a FIFO or device is never opened: opening one may block or act)."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
        raise _not_regular(path, info.st_mode)


def _regular(fd: int, path: Path) -> int:
    """``fd`` made blocking again when it is a regular file's; else closed and refused."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _not_regular(path, info.st_mode)
    os.set_blocking(fd, True)
    return fd


def open_read(path: Path, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """A descriptor of a regular file (read, or ``flags``): a FIFO, socket or device is refused
    from ``lstat`` before any open; ``O_NONBLOCK`` keeps even a raced-in FIFO from blocking."""
    refuse_special(path)
    return _regular(open_fd(path, flags | os.O_NONBLOCK, mode), path)


def open_regular(path: Path) -> BinaryIO:
    """``path`` open for binary reading if a regular file; only its last component may not be a
    symlink (folders may be links: ``MYCODE_HOME``); a FIFO swapped in is never waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    return os.fdopen(_regular(fd, path), "rb")


def read_bytes(path: Path) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and its ``fstat``, opened without following symlinks."""
    with os.fdopen(open_read(path), "rb") as fh:
        info = os.fstat(fh.fileno())
        return fh.read(), info


def replace_atomically(
    path: Path,
    data: bytes | IO[bytes],
    mode: int | None = None,
    *,
    create_parents: bool = False,
    follow_folder_links: bool = False,
) -> None:
    """Write ``data`` (bytes or a binary file) to a temporary file beside ``path``, fsync it and
    rename it over ``path``: readers see the old file or the new one. A FIFO, socket, device or
    folder there is refused; a symlink there is replaced, never written through. ``mode``
    ``None`` keeps the replaced file's bits (new: ``0o666`` - umask); ``follow_folder_links``
    resolves the folders' links first (else any raises :class:`SymlinkRace`)."""
    if follow_folder_links:
        path = Path(os.path.realpath(Path(path).parent), Path(path).name)
    name = Path(path).name
    refuse_special(path)  # never replace a FIFO, socket or device with a file
    with open_parent(path, create=create_parents) as parent:
        if mode is None:
            with contextlib.suppress(OSError):
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
                mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
        tmp = f".{name}.{secrets.token_hex(4)}.mycode-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
        fd = os.open(tmp, flags, 0o666 if mode is None else 0o600, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                if mode is not None:
                    os.fchmod(fh.fileno(), mode)
                if isinstance(data, bytes):
                    fh.write(data)
                else:
                    while chunk := data.read(1 << 20):
                        fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
        with contextlib.suppress(OSError):
            os.fsync(parent)
