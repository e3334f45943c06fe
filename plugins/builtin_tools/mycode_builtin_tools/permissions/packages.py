"""Which package-manager and git invocations need the user's approval.

Installing, removing or publishing packages reaches the network and changes the machine;
``git push`` / ``pull`` / ``fetch`` / ``clone`` reach the network; ``reset --hard``, ``clean``,
``branch -D``, ``checkout -f`` and friends throw work away.
"""

from __future__ import annotations

ANY = "*"
_INSTALLERS: dict[str, set[str]] = {
    "pip": {"install", "uninstall", "download", "wheel"},
    "pip3": {"install", "uninstall", "download", "wheel"},
    "uv": {"add", "remove", "sync", "lock", "tool", "python", "publish"},
    "npm": {"install", "i", "ci", "add", "uninstall", "remove", "rm", "un", "update", "up",
            "upgrade", "publish", "link", "exec", "x"},
    "pnpm": {"install", "i", "add", "remove", "rm", "update", "up", "dlx", "publish", "link",
             "exec"},
    "yarn": {"", "add", "install", "remove", "upgrade", "up", "dlx", "publish", "global"},
    "bun": {"install", "i", "add", "remove", "rm", "update", "x", "publish", "link"},
    "cargo": {"install", "uninstall", "publish", "add", "login", "yank"},
    "go": {"install", "get"},
    "gem": {"install", "uninstall", "update", "push"},
    "bundle": {"", "install", "update", "add"},
    "composer": {"install", "require", "update", "remove", "global"},
    "conda": {"install", "create", "remove", "update", "env"},
    "mamba": {"install", "create", "remove", "update", "env"},
    "micromamba": {"install", "create", "remove", "update", "env"},
    "poetry": {"add", "install", "update", "remove", "publish", "self"},
    "pdm": {"add", "install", "update", "remove", "publish", "sync"},
    "deno": {"install"},
    "dotnet": {"add", "tool"},
    "rustup": {"install", "update", "toolchain", "component", "target"},
    "pyenv": {"install"},
    "nvm": {"install"},
    "asdf": {"install", "plugin"},
    "make": {"install"},
}  # fmt: skip
_SYSTEM_MANAGERS = {
    "apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "apk", "pacman", "brew", "port",
    "snap", "flatpak", "nix-env", "emerge", "pkg",
}  # fmt: skip
_SYSTEM_READ = {"search", "show", "list", "info", "policy", "-h", "--help", "--version", "help"}
_RUNNERS = {"npx", "pnpx", "bunx", "uvx", "pipx"}


def _first_word(args: list[str]) -> str:
    for arg in args:
        if not arg.startswith("-"):
            return arg
    return ""


def install_reason(program: str, args: list[str]) -> str | None:
    """Why this command installs or removes packages (needs approval), or ``None``."""
    if program in _RUNNERS:
        return f"{program} downloads and runs packages"
    if program in _SYSTEM_MANAGERS:
        if _first_word(args) in _SYSTEM_READ:
            return None
        return f"{program} changes the system's packages"
    if program == "dpkg" and any(
        a in ("-i", "--install", "-r", "--remove", "-P", "--purge") for a in args
    ):
        return "dpkg changes the system's packages"
    if program.startswith("python") and args[:2] == ["-m", "pip"]:
        program, args = "pip", args[2:]
    if program.startswith("python") and args[:2] == ["-m", "ensurepip"]:
        return "ensurepip installs pip"
    verbs = _INSTALLERS.get(program)
    if verbs is None:
        return None
    verb = _first_word(args)
    if program == "uv" and verb == "pip":
        sub = _first_word(args[args.index("pip") + 1 :])
        return (
            f"uv pip {sub} changes installed packages"
            if sub in ("install", "uninstall", "sync")
            else None
        )
    if verb in verbs:
        what = f"{program} {verb}".strip()
        return f"{what} installs, removes or publishes packages (network)"
    return None


_GIT_VALUE_OPTIONS = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def _git_sub(args: list[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _GIT_VALUE_OPTIONS:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg, args[i + 1 :]
    return "", []


def git_reason(args: list[str]) -> tuple[str, str] | None:
    """``(rule, reason)`` when a git command needs approval, else ``None``."""
    sub, rest = _git_sub(args)
    flags = set(rest)
    if sub == "push":
        return "builtin:git-push", "git push publishes commits to a remote"
    if sub in ("pull", "fetch", "clone", "ls-remote"):
        return "builtin:network", f"git {sub} uses the network"
    if sub == "submodule" and set(rest) & {"update", "add", "sync", "foreach"}:
        return "builtin:network", "git submodule uses the network"
    if sub == "remote" and set(rest) & {"update", "prune"}:
        return "builtin:network", "git remote update uses the network"
    discard = "builtin:git-discard"
    if sub == "reset" and flags & {"--hard", "--merge", "--keep"}:
        return discard, "git reset --hard throws away uncommitted work"
    if sub == "clean" and not flags & {"-n", "--dry-run"}:
        return discard, "git clean deletes untracked files"
    if sub == "branch" and (
        flags & {"-D"} or (flags & {"-d", "--delete"} and flags & {"-f", "--force"})
    ):
        return discard, "git branch -D deletes a branch with unmerged work"
    if sub in ("checkout", "switch") and (
        flags & {"-f", "--force", "--", ".", "--discard-changes"}
    ):
        return discard, f"git {sub} with these arguments throws away local changes"
    if sub == "restore" and not (flags & {"--staged", "-S"} and not flags & {"--worktree", "-W"}):
        return discard, "git restore throws away local changes"
    if sub == "stash" and flags & {"drop", "clear"}:
        return discard, "git stash drop/clear deletes stashed work"
    if sub in ("filter-branch", "filter-repo") or (
        sub == "reflog" and flags & {"expire", "delete"}
    ):
        return discard, f"git {sub} rewrites history"
    if sub == "gc" and any(a.startswith("--prune") for a in rest):
        return discard, "git gc --prune deletes unreachable objects"
    if sub == "update-ref" and "-d" in flags:
        return discard, "git update-ref -d deletes a ref"
    if sub == "config" and flags & {"--global", "--system"}:
        return (
            "builtin:write-outside-workspace",
            "git config --global changes settings outside the workspace",
        )
    return None
