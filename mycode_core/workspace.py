"""Facts about workspaces shared by the core and plugins."""

from __future__ import annotations

# version-control, dependency, virtualenv and cache folders: never the user's own work
NOISE_DIRS: frozenset[str] = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache",
})  # fmt: skip
BUILD_DIRS: frozenset[str] = frozenset({"dist", "build", "target"})
