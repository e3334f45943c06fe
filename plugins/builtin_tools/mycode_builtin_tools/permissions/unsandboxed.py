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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mycode_builtin_tools.permissions.reach import leads_out, linked_out
from mycode_builtin_tools.permissions.spelling import normalised

READ_ONLY = {
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "echo", "printf",
    "pwd", "which", "type", "file", "stat", "du", "df", "diff", "cmp", "uniq", "cut", "tr",
    "basename", "dirname", "realpath", "readlink", "true", "false", "test", "[", "sort",
    "sleep", "seq", "tree", "nl", "column", "md5sum", "sha1sum", "sha256sum", "jq", "whoami",
    "uname", "id", "cd", "pushd", "popd", "expr", "od", "xxd", "find", "date",
    "hexdump", "strings", "comm", "paste", "fold", "rev", "tac", ":",
}  # fmt: skip
"""The allowlist: programs that only read and print (each with its dangerous options below)."""
READ_ONLY_GIT = {
    "status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "grep", "describe",
    "shortlog", "cat-file", "ls-tree",
}  # fmt: skip
HARMLESS_WRAPPERS = {
    "command", "builtin", "exec", "time", "nice", "timeout", "stdbuf", "env", "bash", "sh",
    "zsh", "dash", "eval",
}  # fmt: skip
"""Wrappers that only run the inner command (which is judged itself)."""
FIND_WRITERS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls", "-fprintf")
SAFE_ENV = {"LC_ALL", "LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS", "LINES"}
SAFE_SINKS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
WRITE_OPS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}


def _short_flag(args: list[str], letter: str) -> bool:
    return any(a.startswith("-") and not a.startswith("--") and letter in a[1:] for a in args)


def _long(args: list[str], *names: str) -> bool:
    """Whether a ``--name`` option is given, abbreviated (``--comp=x``, as getopt takes it) or
    not; an ambiguous abbreviation matches too (it only asks)."""
    for arg in args:
        given = arg.split("=", 1)[0]
        if len(given) > 2 and given.startswith("--") and any(n.startswith(given) for n in names):
            return True
    return False


RUNS_PROGRAM = {
    "sort": ("--compress-program",),
    "rg": ("--pre", "--hostname-bin"),
}
"""Options of allowlisted programs that run another program (``sort --compress-program=./z``)."""
NAMES_FROM_FILE = {
    "wc": ("--files0-from",), "du": ("--files0-from",), "sort": ("--files0-from",),
    "find": (), "file": ("--files-from",),
}  # fmt: skip
"""Options that read the names of the files to read from a file, where they cannot be checked."""
SYSTEM_PROGRAMS = (Path("/usr"), Path("/bin"), Path("/sbin"))
NOT_PATHS = {
    "echo", "printf", "basename", "dirname", "readlink", "realpath", "which", "type", "true",
    "false", "test", "[", "seq", "sleep", "expr", "whoami", "uname", "id", "pwd", "tr", ":",
}  # fmt: skip
"""Allowlisted programs whose words are strings, not paths they read."""
PATTERN_FIRST = {"grep", "egrep", "fgrep", "rg"}


def _candidates(arg: str) -> list[str]:
    """The paths one argument may name: itself, a ``--opt=value``'s value, or what follows
    any letter of a short option cluster (``-fFILE``, ``-nfFILE``)."""
    if arg == "-" or not arg.startswith("-"):
        return [arg]
    if arg.startswith("--"):
        return [arg.split("=", 1)[1]] if "=" in arg else []
    return [arg[i:] for i in range(2, min(len(arg), 64))]


def _follows_links(program: str, args: list[str]) -> bool:
    """Whether this is a recursive read that follows symlinks found inside its folders."""
    if program in ("grep", "egrep", "fgrep"):
        return _short_flag(args, "R") or _long(args, "--dereference-recursive")
    if program == "rg":
        return _short_flag(args, "L") or _long(args, "--follow")
    if program == "find":
        return "-L" in args or "-follow" in args
    if program == "ls":
        recursive = _short_flag(args, "R") or _long(args, "--recursive")
        return recursive and (_short_flag(args, "L") or _long(args, "--dereference"))
    if program == "du":
        return _short_flag(args, "L") or _long(args, "--dereference")
    if program == "tree":
        return _short_flag(args, "l")
    if program == "diff":
        recursive = _short_flag(args, "r") or _long(args, "--recursive")
        return recursive and not _long(args, "--no-dereference")
    return False


def _walked(program: str, args: list[str], cwd: Path) -> list[Path]:
    """The folders a link-following recursive read enters: its folder operands, else ``.``."""
    operands = [a for a in args if not a.startswith("-")]
    if program in PATTERN_FIRST and not any(
        a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in args
    ):
        operands = operands[1:]
    folders = [cwd / a for a in operands if (cwd / a).is_dir()]
    return folders or [cwd]


def _option_danger(program: str, args: list[str]) -> str | None:
    """Why an allowlisted program's options make it write or run something, or ``None``."""
    positional = [a for a in args if not a.startswith("-") or a == "-"]
    if program in RUNS_PROGRAM and _long(args, *RUNS_PROGRAM[program]):
        return f"{program} runs another program with these options"
    if program in NAMES_FROM_FILE and (
        _long(args, *NAMES_FROM_FILE[program])
        or (program == "find" and "-files0-from" in args)
        or (program == "file" and _short_flag(args, "f"))
    ):
        return f"{program} reads the names of the files it reads from a file"
    if program.endswith("sum") and (_short_flag(args, "c") or _long(args, "--check")):
        return f"{program} -c reads the files a checksum list names"
    if program == "find" and any(a.startswith(FIND_WRITERS) for a in args):
        return "find runs commands or writes files with these options"
    if program == "sort" and (_short_flag(args, "o") or _long(args, "--output")):
        return "sort -o writes a file"
    if program == "uniq" and len(positional) > 1:
        return "uniq writes its second file operand"
    if program == "xxd" and (_short_flag(args, "r") or any(a.startswith("-rev") for a in args)):
        return "xxd -r writes binary output"
    if program == "tree" and _short_flag(args, "o"):
        return "tree -o writes a file"
    if program == "file" and _short_flag(args, "C"):
        return "file -C writes a magic file"
    if program == "date" and (_short_flag(args, "s") or _long(args, "--set")):
        return "date -s sets the clock"
    return None


def _workspace_program(word: str, cwd: Path) -> bool:
    """Whether ``word``, the program of a command, is spelled as a path (``./cat``, ``bin/ls``)
    that is not a system program: a program of the workspace named like an allowed one."""
    if "/" not in word:
        return False
    real = Path(os.path.realpath(os.path.join(cwd, word)))
    return not any(folder in real.parents for folder in SYSTEM_PROGRAMS)


def proc_secret(raw: str, cwd: Path) -> bool:
    """True when ``raw`` may name another process's environment or memory under ``/proc``."""
    text = raw if raw.startswith("/") else os.path.normpath(str(cwd / raw))
    if not text.startswith("/proc"):
        return False
    parts = [p for p in text.split("/") if p][1:]
    if not parts:
        return False
    head = parts[0]
    unknown = any(ch in raw for ch in "$`*?[{")
    return unknown or head.isdigit() or head in ("self", "thread-self") or len(parts) > 1


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

    def validation(self, words: list[str]) -> bool:
        """Whether the command's own program and arguments are a validation command."""
        text = " ".join(normalised(words))
        return any(pattern.match(text) for pattern in self.matcher)

    def doubt(self, part: Any, cwd: Path) -> str | None:
        """Why this command cannot be shown to be harmless, or ``None`` when it is."""
        words = list(part.words)
        program = part.command.program
        why = (
            f"no sandbox contains it and {program} is not known to be harmless; "
            "run `mycode doctor` to see why commands are not sandboxed"
        )
        if getattr(part, "hidden", None):
            return f"{part.hidden}, and {why}"
        odd = [w for w in part.wrappers if w.split()[0] not in HARMLESS_WRAPPERS]
        if odd:
            return f"it runs through {odd[0]}, and {why}"
        if part.fed:
            return f"xargs gives {program} arguments that cannot be checked, and {why}"
        env = [a.split("=", 1)[0] for a in [*part.command.assignments, *part.assignments]]
        unsafe_env = [name for name in env if name not in SAFE_ENV and not name.startswith("LC_")]
        for op, target in part.command.redirects:
            if proc_secret(target, cwd) or (op == "<" and self._protected(target, cwd)):
                return f"it reads {target}, and {why}"
            if op == "<" and (reason := leads_out(target, cwd, self.root, self._homes())):
                return f"it reads {target}: {reason}, and {why}"
            if op in WRITE_OPS and not (op == ">&" and target.isdigit()):
                if target not in SAFE_SINKS and not target.startswith("/dev/fd/"):
                    return f"it writes to {target} ({op}), and {why}"
        for arg in words[1:]:
            value = arg.split("=", 1)[-1] if arg.startswith("-") else arg
            if value and proc_secret(value, cwd):
                return f"it reads {value}: another process's environment or memory"
        if self.validation(words):
            if self.trusted:
                return None
            return (
                f"{program} runs this workspace's own code (a validation command) and no sandbox "
                "contains it; trust the workspace (`mycode --trust`) or allow the rule to let "
                "it run unasked"
            )
        if unsafe_env:
            return f"it sets {', '.join(unsafe_env)} for {program}, and {why}"
        args = words[1:]
        if _workspace_program(words[0], cwd):
            return f"{words[0]} is not the system's {program}, and {why}"
        if program == "git":
            sub = next((a for a in args if not a.startswith("-")), "")
            if not self.trusted:
                return f"git runs this repository's own configuration (hooks, fsmonitor): {why}"
            if (
                sub not in READ_ONLY_GIT
                or any(a.startswith(("-c", "--exec", "--output", "-o", "--ext-diff")) for a in args)
                or (sub == "grep" and (_short_flag(args, "O") or _long(args, "--open-files-in")))
                or any(a.startswith(("--git-dir", "--work-tree", "-C")) for a in args)
            ):
                return why
            return self._links(program, args, cwd, why)
        if program not in READ_ONLY:
            return why
        danger = _option_danger(program, args)
        if danger:
            return f"{danger}, and {why}"
        for arg in args:
            if "$" in arg or "`" in arg:
                return f"{arg!r} expands to something that cannot be checked, and {why}"
            value = arg.split("=", 1)[-1] if arg.startswith("-") else arg
            if value and self._protected(value, cwd):
                return f"it reads {value}, under your home folder, and {why}"
        return self._links(program, args, cwd, why)

    def _links(self, program: str, args: list[str], cwd: Path, why: str) -> str | None:
        """Why the command reads, through a symlink, outside the workspace (SPEC §8)."""
        if program not in NOT_PATHS:
            for arg in args:
                for value in _candidates(arg):
                    if reason := leads_out(value, cwd, self.root, self._homes()):
                        return f"it reads {value}: {reason}, and {why}"
        if _follows_links(program, args):
            if reason := linked_out(_walked(program, args, cwd), self.root):
                return f"{program} follows the links it finds: {reason}, and {why}"
        return None

    def _homes(self) -> tuple[Path, ...]:
        return tuple(Path(os.path.realpath(h)) for h in (Path.home(), self.home))


def strict_for(context: Any) -> Strict | None:
    """The test to apply to this run's commands, or ``None`` when a sandbox contains them."""
    from mycode_builtin_tools.tools.run_command import sandboxed
    from mycode_core import trust
    from mycode_core.api import DEFAULT_VALIDATORS

    if context.permission_mode == "bypass" or sandboxed(context):
        return None
    settings = context.settings
    return Strict(
        root=Path(context.workspace).resolve(),
        home=Path(context.home).resolve(),
        trusted=trust.state(settings)["trusted"] if settings is not None else False,
        matcher=[re.compile(p) for items in DEFAULT_VALIDATORS.values() for p in items],
    )
