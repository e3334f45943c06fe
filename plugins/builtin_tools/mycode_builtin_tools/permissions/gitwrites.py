"""git commands that write the repository, inside the sandbox.

The whole ``.git`` folder is read-only inside the sandbox (a planted ``core.fsmonitor``, hook
or ``commondir`` would run the next time anyone runs git outside it). A git subcommand that
writes the repository therefore asks first (denied in ``-p`` mode with the rule that allows
it); once allowed, a command line made only of such git commands runs with ``.git`` writable
for that call only — ``.git/config`` and ``.git/hooks`` stay read-only even then, and a
command line that also runs anything else, or passes git ``-c``/``--config-env``/
``--exec-path``, keeps the whole ``.git`` read-only.
"""

from __future__ import annotations

import os
import shlex

from mycode_builtin_tools.permissions.commands import Finding

WRITERS = frozenset(
    {
        "add", "am", "apply", "bisect", "branch", "checkout", "cherry-pick", "clean", "clone",
        "commit", "config", "fetch", "gc", "init", "merge", "mv", "notes", "prune", "pull",
        "push", "rebase", "remote", "repack", "replace", "reset", "restore", "revert", "rm",
        "sparse-checkout", "stash", "submodule", "switch", "symbolic-ref", "tag", "update-index",
        "update-ref", "worktree", "write-tree", "commit-tree", "hash-object", "read-tree",
        "pack-refs", "reflog", "maintenance", "lfs",
    }
)  # fmt: skip
"""Subcommands that may write ``.git`` (listing forms of branch/tag/stash/config excepted)."""

_READ_FORMS = {
    "branch": {"-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes", "--show-current",
               "--contains", "--merged", "--no-merged", "--no-color", "--color"},
    "tag": {"-l", "--list", "-n", "--contains", "--merged", "--no-merged", "--points-at"},
    "stash": {"list", "show"},
    "config": {"--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "get"},
    "remote": {"-v", "--verbose", "show", "get-url"},
    "worktree": {"list"},
    "notes": {"list", "show"},
    "reflog": {"show"},
}  # fmt: skip
_VALUE_OPTIONS = {"-C", "--git-dir", "--work-tree", "--namespace"}
_UNSAFE_OPTIONS = ("-c", "--config-env", "--exec-path")


def _git_words(words: list[str]) -> tuple[str | None, list[str], bool]:
    """(subcommand, its arguments, whether a config-changing global option came first)."""
    index, unsafe = 1, False
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        if word in _UNSAFE_OPTIONS or word.startswith(tuple(o + "=" for o in _UNSAFE_OPTIONS)):
            unsafe = True
            index += 1 if "=" in word else 2
            continue
        index += 2 if word in _VALUE_OPTIONS else 1
    if index >= len(words):
        return None, [], unsafe
    return words[index], words[index + 1 :], unsafe


def _writes(sub: str | None, args: list[str]) -> bool:
    if sub not in WRITERS:
        return False
    reads = _READ_FORMS.get(sub)
    if reads is None:
        return True
    if not args:
        return sub == "stash"  # a bare `stash` stashes; the others list
    return not any(arg in reads or arg.split("=")[0] in reads for arg in args[:2])


def _is_git(word: str) -> bool:
    return os.path.basename(word) == "git"


def writes_repository(text: str) -> str | None:
    """The git subcommand if the simple command ``text`` writes the repository, else None."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # VAR=value prefixes
    if not words or not _is_git(words[0]):
        return None
    sub, args, _unsafe = _git_words(words)
    return sub if _writes(sub, args) else None


def finding(text: str, command: str) -> Finding | None:
    """The built-in ask for a git command ``text`` of the command line ``command`` that writes
    the repository (sandboxed runs); it promises a writable ``.git`` only when
    :func:`git_only_writes` grants it."""
    sub = writes_repository(text)
    if sub is None:
        return None
    then = (
        "once allowed it runs with .git writable for that call"
        if git_only_writes(command)
        else "this command line keeps .git read-only even once allowed, so git cannot write "
        "there: run it yourself, or as git commands only (joined by &&, ||, ;) without -c, "
        "--config-env, --exec-path, redirection, substitution or other programs"
    )
    return Finding(
        "ask",
        "builtin:git-writes-repository",
        f"git {sub} writes the repository, and .git is read-only in the sandbox; {then}",
    )


def git_only_writes(command: str) -> bool:
    """Whether the command line is only git commands that write the repository (joined by
    ``&&``, ``||`` or ``;``, no redirection, substitution or other program): then ``.git``
    is writable for that call."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return False
    if any(ch in command for ch in "`$\n"):
        return False
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token in ("&&", "||", ";"):
            parts.append([])
        elif token and token[0] in ";&|<>()":
            return False
        else:
            parts[-1].append(token)
    found = False
    for words in parts:
        if not words:
            continue
        if not _is_git(words[0]) or words[0] not in ("git", "/usr/bin/git"):
            return False
        sub, args, unsafe = _git_words(words)
        if unsafe:
            return False
        found = found or _writes(sub, args)
    return found
