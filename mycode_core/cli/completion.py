"""Tab completion in the interactive prompt: ``/`` commands and ``@path`` mentions (issue 20).

``/`` at the start of the input completes the session's commands — the built-in ones and every
plugin's (``register_slash_commands``), each with its description; when none starts with what
was typed, the plugins' commands are collected again first (a skill written since). ``@``
completes workspace files: in a git work tree the files git knows or would add
(``.gitignore`` respected, through :mod:`mycode_core.safegit`), elsewhere a walk that skips
:data:`~mycode_core.workspace.NOISE_DIRS` and the workspace's top-level ``.gitignore``
patterns. The list is cached for a few seconds.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mycode_core.workspace import NOISE_DIRS

MAX_FILES = 20_000
MAX_SHOWN = 200
CACHE_SECONDS = 5.0
_MENTION = re.compile(r"(?:^|(?<=\s))@([\w./~-]*)$")


def _ignore_patterns(root: Path) -> list[str]:
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = (line.strip() for line in text.splitlines())
    return [line.strip("/") for line in lines if line and not line.startswith(("#", "!"))]


def _walk(root: Path) -> list[str]:
    patterns = _ignore_patterns(root)

    def ignored(relative: str, name: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) for p in patterns)

    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        base = os.path.relpath(folder, root)
        prefix = "" if base == "." else base + "/"
        dirs[:] = sorted(d for d in dirs if d not in NOISE_DIRS and not ignored(prefix + d, d))
        for name in sorted(files):
            if not ignored(prefix + name, name):
                found.append(prefix + name)
                if len(found) >= MAX_FILES:
                    return found
    return found


def workspace_files(root: Path) -> list[str]:
    """The workspace's files, relative, ``.gitignore`` respected (at most :data:`MAX_FILES`)."""
    from mycode_core import safegit

    try:
        done = safegit.run(
            ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            root,
            root=root,
            timeout=5,
        )
    except (safegit.SafeGitError, OSError, ValueError) as _exc:
        return _walk(root)
    except Exception:  # noqa: BLE001 - git missing or hung: walk instead
        return _walk(root)
    if done.returncode != 0:
        return _walk(root)
    raw = done.stdout if isinstance(done.stdout, bytes) else done.stdout.encode()
    names = [n.decode("utf-8", "replace") for n in raw.split(b"\0") if n]
    return [n for n in names if (root / n).is_file()][:MAX_FILES]


class PromptCompleter(Completer):
    """Completes ``/`` commands (with descriptions) and ``@path`` mentions."""

    def __init__(
        self,
        commands: Callable[[], dict[str, str]],
        root: Path,
        *,
        files: Any = None,
        again: Callable[[], dict[str, str]] | None = None,
    ) -> None:
        """``commands``: the names and descriptions known; ``again``: the same collected
        anew, asked only when Tab finds no name for what was typed."""
        self._commands = commands
        self._again = again
        self._root = root
        self._files: Callable[[Path], list[str]] = files or workspace_files
        self._cache: tuple[float, list[str]] | None = None

    def _file_list(self) -> list[str]:
        now = time.monotonic()
        if self._cache is None or now - self._cache[0] > CACHE_SECONDS:
            self._cache = (now, self._files(self._root))
        return self._cache[1]

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        """Command names after a leading ``/``; workspace paths after ``@``."""
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before and "\n" not in before:
            typed = before[1:]
            commands = self._commands()
            if self._again is not None and not any(name.startswith(typed) for name in commands):
                commands = self._again()  # a command added since (a skill written meanwhile)
            for name, description in sorted(commands.items()):
                if name.startswith(typed):
                    yield Completion(
                        "/" + name, start_position=-len(before), display_meta=description
                    )
            return
        match = _MENTION.search(before)
        if match is None:
            return
        typed = match.group(1)
        yield from _path_completions(typed, self._file_list())


def _path_completions(typed: str, files: Iterable[str]) -> Iterator[Completion]:
    """Files starting with ``typed``, then files whose name contains it (at most
    :data:`MAX_SHOWN`)."""
    lowered = typed.lower()
    shown = 0
    later = []
    for name in files:
        if name.startswith(typed):
            yield Completion(name, start_position=-len(typed))
            shown += 1
        elif lowered and lowered in name.lower():
            later.append(name)
        if shown >= MAX_SHOWN:
            return
    for name in later[: MAX_SHOWN - shown]:
        yield Completion(name, start_position=-len(typed))
