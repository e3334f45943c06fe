"""A task's own copy of its workspace, its ``setup``, and the diff it ends with.

* a ``workspace`` that is a clean git repository gets a clone of its HEAD that borrows its
  objects (``git clone --shared``: nothing, not even an object, is written into the source);
* any other ``workspace`` is copied (a repository with changes or without commits too, its
  ``.git`` included); a copy that is not a git repository gets one with a baseline commit;
* a ``repo`` is cloned and checked out at ``commit`` (default: its HEAD).

The start of the task is the tree after ``setup``, recorded as a git tree object through a
private index file, so neither HEAD nor the index of the copy changes; the patch is the diff
from that tree to the final one, untracked (not ignored) files included.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mycode_core import safegit

GIT_IDENTITY = ("-c", "user.name=mycode batch", "-c", "user.email=batch@mycode.invalid")


class SandboxError(Exception):
    """The copy could not be made, or ``setup`` failed; the message says what happened."""


def git(args: Sequence[str], cwd: Path, *, env: dict[str, str] | None = None) -> str:
    """Run ``git ARGS`` in ``cwd`` through :mod:`mycode_core.safegit` (the repository's own
    configuration never runs); return stdout, raise :class:`SandboxError` on failure.
    ``env`` holds only the variables this call adds (e.g. a private ``GIT_INDEX_FILE``)."""
    try:
        completed = safegit.run([*GIT_IDENTITY, *args], cwd, env=env, text=True)
    except safegit.SafeGitError as exc:
        raise SandboxError(f"git {args[0]} refused: {exc}") from None
    except subprocess.SubprocessError as exc:
        raise SandboxError(f"git {args[0]} failed: {exc}") from None
    if completed.returncode != 0:
        raise SandboxError(f"git {args[0]} failed: {_reason(completed)}")
    return str(completed.stdout)


def _reason(completed: subprocess.CompletedProcess[Any]) -> str:
    """git's own reason: its first ``fatal:``/``error:`` line (a failed clone ends with
    advice such as "and the repository exists."), else its last line, else the exit code."""
    lines = [ln.strip() for ln in str(completed.stderr or completed.stdout).splitlines()]
    lines = [ln for ln in lines if ln]
    reasons = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (reasons or lines[-1:] or [f"exit {completed.returncode}"])[0]


def _checkout(clone: Path, commit: str, source: str) -> None:
    """Check out ``commit`` (an id, a tag or a branch of the repository) detached; one that
    is not among the cloned refs is fetched by name once."""
    for name in (commit, f"origin/{commit}", None):
        if name is None:
            try:
                git(["fetch", "--quiet", "origin", commit], clone)
            except SandboxError:
                break
            name = "FETCH_HEAD"
        try:
            target = git(["rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], clone)
        except SandboxError:
            continue
        git(["checkout", "--quiet", "--detach", target.strip()], clone)
        return
    raise SandboxError(f"commit {commit!r} is not in {source}")


def _git_toplevel(path: Path) -> Path | None:
    try:
        out = git(["rev-parse", "--show-toplevel"], path)
    except (SandboxError, OSError):
        return None
    return Path(out.strip()).resolve() if out.strip() else None


def _clean_head(repo: Path) -> str | None:
    """``repo``'s HEAD commit when it has one and no changes (a clone of it is then a true
    copy), else ``None``. Its index is not refreshed (no optional locks): nothing is written."""
    try:
        commit = git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], repo).strip()
        status = git(
            ["status", "--porcelain", "--untracked-files=normal"],
            repo,
            env={"GIT_OPTIONAL_LOCKS": "0"},
        )
    except (SandboxError, OSError):
        return None
    return commit if commit and not status.strip() else None


def make_copy(
    *,
    workspace: str | None,
    repo: str | None,
    commit: str | None,
    dest: Path,
    skip: Path,
) -> tuple[Path, Path | None]:
    """Make the task's copy at ``dest``; return ``(copy, source repo of a worktree or None)``
    (copies are never worktrees now; an older batch's may still be found and removed).

    A copied folder leaves out ``skip`` (the batch's output folder) when it lies inside it.
    """
    if dest.exists():
        remove_copy(dest, None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if repo is not None:
        git(["clone", "--quiet", "--no-checkout", repo, str(dest)], dest.parent)
        _checkout(dest, commit or "HEAD", repo)
        return dest, None
    assert workspace is not None
    source = Path(workspace)
    top = _git_toplevel(source)
    commit = _clean_head(top) if top is not None and top == source.resolve() else None
    if top is not None and commit is not None:
        # not a worktree: that would write the run's objects and its registration into `top`
        git(["clone", "--quiet", "--shared", "--no-checkout", str(top), str(dest)], dest.parent)
        git(["checkout", "--quiet", "--detach", commit], dest)
        return dest, None
    shutil.copytree(source, dest, symlinks=True, ignore=_skip_inside(source, skip))
    if _git_toplevel(dest) != dest.resolve():
        git(["init", "--quiet"], dest)
        git(["add", "-A"], dest)
        git(["commit", "--quiet", "--allow-empty", "--no-verify", "-m", "batch baseline"], dest)
    return dest, None


def _skip_inside(source: Path, out: Path) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter leaving out the output folder when it is inside ``source``."""
    out = out.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        return {name for name in names if here / name == out}

    return ignore


def snapshot(copy: Path, index_file: Path) -> str:
    """The tree of every tracked and untracked (not ignored) file, as a git tree id.

    The copy's own index is the starting point (so unchanged files are not hashed again); the
    result goes to ``index_file``, never to the copy's index. The copy keeps the index's mtime:
    a file changed in the second of the checkout, its size unchanged, matches its entry's stat,
    and git compares its content only because it is no older than the index.
    """
    env = {"GIT_INDEX_FILE": str(index_file)}
    index_file.unlink(missing_ok=True)
    try:
        own = Path(
            git(["rev-parse", "--path-format=absolute", "--git-path", "index"], copy).strip()
        )
        if own.is_file():  # with its mtime: git rehashes the files no older than the index
            shutil.copy2(own, index_file)  # ("racily clean"), a fresh mtime would hide them
    except (SandboxError, OSError):
        pass
    git(["add", "-A", "--", "."], copy, env=env)
    return git(["write-tree"], copy, env=env).strip()


def diff(copy: Path, start_tree: str, index_file: Path) -> str:
    """The binary-safe diff from ``start_tree`` to the copy's current files."""
    end_tree = snapshot(copy, index_file)
    return git(
        ["diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", start_tree, end_tree],
        copy,
    )


def keep_copy(copy: Path) -> None:
    """Make a kept copy stand on its own: a clone that borrows the source repository's objects
    gets its own (``git repack -a -d``, as ``clone --dissociate``), so it outlives the source."""
    borrowed = copy / ".git" / "objects" / "info" / "alternates"
    if borrowed.is_file():
        git(["repack", "-a", "-d", "--quiet"], copy)
        borrowed.unlink()


def remove_copy(copy: Path, worktree_of: Path | None) -> None:
    """Remove the copy (unregistering a worktree from its repository)."""
    if worktree_of is not None:
        try:
            git(["worktree", "remove", "--force", str(copy)], worktree_of)
        except (SandboxError, OSError):
            pass
    shutil.rmtree(copy, ignore_errors=True)
    if worktree_of is not None:
        try:
            git(["worktree", "prune"], worktree_of)
        except (SandboxError, OSError):
            pass
