"""Cheap facts about the project: does it have tests, and which commands verify it?

A bounded walk (three levels, a few thousand entries, skipping vendored and cache folders)
plus a look at a handful of well-known files at the root. No command is run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mycode_core.api import BUILD_DIRS, NOISE_DIRS

MAX_DEPTH = 3
MAX_ENTRIES = 4000
_SKIP = NOISE_DIRS | BUILD_DIRS | {"env", ".idea", ".vscode", "vendor", "site-packages"}
_TEST_DIRS = {"tests", "test", "__tests__", "spec", "testing", "Tests"}
_PY_TEST = re.compile(r"^(test_.+|.+_test)\.py$|^conftest\.py$")
_GO_TEST = re.compile(r"^.+_test\.go$")
_JS_TEST = re.compile(r"^.+\.(test|spec)\.(js|jsx|ts|tsx|mjs|cjs)$")
_NPM_DEFAULT_TEST = "no test specified"
_ECOSYSTEM_TESTS = (  # a root file → the test command of its ecosystem, first match wins
    ("mix.exs", "mix test"),
    ("mvnw", "./mvnw test"),
    ("pom.xml", "mvn test"),
    ("gradlew", "./gradlew test"),
    ("build.gradle", "gradle test"),
    ("build.gradle.kts", "gradle test"),
    ("build.sbt", "sbt test"),
    ("Package.swift", "swift test"),
    ("composer.json", "vendor/bin/phpunit"),
    ("deno.json", "deno test"),
    ("deno.jsonc", "deno test"),
    ("stack.yaml", "stack test"),
    ("project.clj", "lein test"),
    ("build.zig", "zig build test"),
)


@dataclass(frozen=True)
class Project:
    """What the workspace offers for verification; each hint is a command or ``None``."""

    has_tests: bool = False
    test: str | None = None
    lint: str | None = None
    typecheck: str | None = None
    build: str | None = None

    def hint(self, kind: str) -> str | None:
        """A command that would verify ``kind`` (``check`` = the first one available)."""
        if kind == "check":
            return self.test or self.lint or self.typecheck or self.build
        return getattr(self, kind, None)

    @property
    def verifiable(self) -> bool:
        """Whether any verification command is known for this project."""
        return self.has_tests or any((self.lint, self.typecheck, self.build))


def _read(path: Path, limit: int = 200_000) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""


def _package_scripts(root: Path) -> dict[str, Any]:
    text = _read(root / "package.json")
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return scripts if isinstance(scripts, dict) else {}


def _make_targets(root: Path) -> set[str]:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = _read(root / name)
        if text:
            return set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, re.MULTILINE))
    return set()


def _not_empty(folder: str) -> bool:
    with os.scandir(folder) as entries:
        return any(True for _ in entries)


def _walk_for_tests(root: Path) -> tuple[bool, str | None]:
    """``(found, language)``: test files or folders within the first levels of the tree."""
    budget = MAX_ENTRIES
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and budget > 0:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in _SKIP or name.startswith("."):
                        continue
                    if name in _TEST_DIRS and _not_empty(entry.path):
                        return True, None
                    if depth + 1 < MAX_DEPTH:
                        stack.append((Path(entry.path), depth + 1))
                elif _PY_TEST.match(name):
                    return True, "python"
                elif _GO_TEST.match(name):
                    return True, "go"
                elif _JS_TEST.match(name):
                    return True, "js"
            except OSError:
                continue
    return False, None


def _ecosystem_test(root: Path, names: set[str]) -> str | None:
    """The usual test command of a non-Python, non-JS ecosystem the root's files name."""
    for marker, command in _ECOSYSTEM_TESTS:
        if marker in names:
            return command
    if "pubspec.yaml" in names:
        return "flutter test" if "flutter:" in _read(root / "pubspec.yaml") else "dart test"
    if "Gemfile" in names:
        return "bundle exec rspec" if "spec" in names else "bundle exec rake test"
    if any(name.endswith((".sln", ".csproj", ".fsproj")) for name in names):
        return "dotnet test"
    return None


def inspect(workspace: Path) -> Project:
    """Look at ``workspace`` and say what verifies it (bounded; never raises)."""
    root = Path(workspace)
    names = set()
    try:
        names = {entry.name for entry in os.scandir(root)}
    except OSError:
        return Project()
    scripts = _package_scripts(root) if "package.json" in names else {}
    targets = _make_targets(root)
    pyproject = _read(root / "pyproject.toml") if "pyproject.toml" in names else ""
    python = bool(pyproject) or "setup.py" in names or "setup.cfg" in names

    found, language = _walk_for_tests(root)
    npm_test = str(scripts.get("test", ""))
    has_npm_test = bool(npm_test) and _NPM_DEFAULT_TEST not in npm_test
    has_tests = (
        found
        or has_npm_test
        or bool({"test", "tests", "check"} & targets)
        or "Cargo.toml" in names
        or bool({"pytest.ini", "tox.ini", "noxfile.py", "conftest.py"} & names)
        or "[tool.pytest" in pyproject
    )

    test = None
    if "test" in targets or "tests" in targets:
        test = "make test" if "test" in targets else "make tests"
    elif has_npm_test:
        test = "npm test"
    elif "Cargo.toml" in names:
        test = "cargo test"
    elif language == "go" or ("go.mod" in names and found):
        test = "go test ./..."
    elif "tox.ini" in names and not found:
        test = "tox"
    elif has_tests and language is None and (ecosystem := _ecosystem_test(root, names)):
        test = ecosystem
    elif has_tests:
        test = "python -m pytest -q" if language in (None, "python") else "npm test"

    lint = None
    if "lint" in targets:
        lint = "make lint"
    elif "lint" in scripts:
        lint = "npm run lint"
    elif "[tool.ruff" in pyproject or names & {"ruff.toml", ".ruff.toml"}:
        lint = "ruff check ."
    elif ".flake8" in names:
        lint = "flake8"
    elif any(name.startswith((".eslintrc", "eslint.config")) for name in names):
        lint = "npx eslint ."
    elif "Cargo.toml" in names:
        lint = "cargo clippy"

    typecheck = None
    if "typecheck" in scripts:
        typecheck = "npm run typecheck"
    elif "[tool.mypy" in pyproject or "mypy.ini" in names:
        typecheck = "mypy ."
    elif "pyrightconfig.json" in names:
        typecheck = "pyright"
    elif "tsconfig.json" in names:
        typecheck = "npx tsc --noEmit"

    build = None
    if "build" in scripts:
        build = "npm run build"
    elif "Cargo.toml" in names:
        build = "cargo build"
    elif "go.mod" in names:
        build = "go build ./..."
    elif "build" in targets or "all" in targets:
        build = "make"
    elif python:
        build = "python -m compileall -q ."

    return Project(has_tests=has_tests, test=test, lint=lint, typecheck=typecheck, build=build)
