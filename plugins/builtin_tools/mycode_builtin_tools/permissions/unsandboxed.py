"""Judging commands when no OS sandbox contains them (SPEC §8).

Without a sandbox a command may only run unasked when the policy can show it to be harmless:
a read-only tool from a short list, reading nothing under the home folder or ``MYCODE_HOME``,
or a recognised validation command of the workspace (tests, lint, type-check, build —
verifying is why the agent runs them). Everything else asks (in ``-p``: a denial saying how to
allow it). Shell variables and command substitutions in arguments are doubted as well, since
what they expand to cannot be checked before the command runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READ_ONLY = {
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "echo", "printf",
    "pwd", "which", "type", "file", "stat", "du", "df", "diff", "cmp", "uniq", "cut", "tr",
    "basename", "dirname", "realpath", "readlink", "date", "true", "false", "test", "[",
    "sleep", "seq", "tree", "nl", "column", "md5sum", "sha1sum", "sha256sum", "jq", "whoami",
    "uname", "hostname", "id", "cd", "pushd", "popd", "command", "hash", "expr", "od", "xxd",
    "hexdump", "strings", "less", "more", "comm", "paste", "fold", "rev", "tac", "printenv",
}  # fmt: skip
READ_ONLY_GIT = {
    "status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "grep", "describe",
    "shortlog", "cat-file", "ls-tree",
}  # fmt: skip
UNSAFE_OPTIONS = {
    "sort": ("-o", "--output"),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls"),
}


@dataclass
class Strict:
    """The harmlessness test for commands of one run without a sandbox."""

    root: Path
    home: Path
    trusted: bool
    matcher: Any

    def _protected(self, raw: str, cwd: Path) -> bool:
        if raw.startswith("~"):
            return True
        path = Path(os.path.normpath(cwd / raw))
        inside = path == self.root or self.root in path.parents
        if inside:
            return False
        homes = [Path.home(), self.home]
        return any(path == h or h in path.parents for h in homes) or path == Path("/")

    def doubt(self, part: Any, cwd: Path) -> str | None:
        """Why this command cannot be shown to be harmless, or ``None`` when it is."""
        words = list(part.words)
        program = part.command.program
        if self.matcher is not None and self.matcher.kind_of(" ".join(words)):
            return None
        why = (
            f"no sandbox contains it and {program} is not known to be harmless; "
            "run `mycode doctor` to see why commands are not sandboxed"
        )
        args = words[1:]
        if program == "git":
            sub = next((a for a in args if not a.startswith("-")), "")
            if not self.trusted:
                return f"git runs this repository's own configuration (hooks, fsmonitor): {why}"
            if sub not in READ_ONLY_GIT or any(a.startswith(("-c", "--exec")) for a in args):
                return why
            return None
        if program == "sort":
            if any(a.startswith(UNSAFE_OPTIONS["sort"]) for a in args):
                return why
        elif program == "find":
            if any(a in UNSAFE_OPTIONS["find"] for a in args):
                return why
        elif program not in READ_ONLY:
            return why
        for arg in args:
            if "$" in arg or "`" in arg:
                return f"{arg!r} expands to something that cannot be checked, and {why}"
            value = arg.split("=", 1)[-1] if arg.startswith("-") else arg
            if value and self._protected(value, cwd):
                return f"it reads {value}, under your home folder, and {why}"
        return None


def strict_for(context: Any) -> Strict | None:
    """The test to apply to this run's commands, or ``None`` when a sandbox contains them."""
    from mycode_builtin_tools.tools.run_command import sandboxed
    from mycode_core import trust
    from mycode_core.runtime.observation import ValidationMatcher

    if context.permission_mode == "bypass" or sandboxed(context):
        return None
    settings = context.settings
    return Strict(
        root=Path(context.workspace).resolve(),
        home=Path(context.home).resolve(),
        trusted=trust.state(settings)["trusted"] if settings is not None else False,
        matcher=ValidationMatcher(),
    )
