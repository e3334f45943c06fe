"""Does the project have tests, and what would verify it?"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mycode_completion_gate.project import inspect


def write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_empty_project(tmp_path: Path) -> None:
    project = inspect(tmp_path)
    assert not project.has_tests and not project.verifiable
    assert project.hint("test") is None


@pytest.mark.parametrize(
    ("rel", "hint"),
    [
        ("test_calc.py", "python -m pytest -q"),
        ("src/pkg/tests/test_x.py", "python -m pytest -q"),
        ("tests/helpers.txt", "python -m pytest -q"),
        ("pkg/calc_test.go", "go test ./..."),
        ("src/app.test.ts", "npm test"),
    ],
)
def test_test_files(tmp_path: Path, rel: str, hint: str) -> None:
    write(tmp_path, rel)
    project = inspect(tmp_path)
    assert project.has_tests
    assert project.hint("test") == hint
    assert project.hint("check") == hint


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        (["mix.exs", "test/calc_test.exs"], "mix test"),
        (["pom.xml", "src/test/java/CalcTest.java"], "mvn test"),
        (["pom.xml", "mvnw", "src/test/java/CalcTest.java"], "./mvnw test"),
        (["build.gradle.kts", "gradlew", "src/test/kotlin/CalcTest.kt"], "./gradlew test"),
        (["composer.json", "tests/CalcTest.php"], "vendor/bin/phpunit"),
        (["Gemfile", "spec/calc_spec.rb"], "bundle exec rspec"),
        (["Package.swift", "Tests/CalcTests/CalcTests.swift"], "swift test"),
        (["pubspec.yaml", "test/calc_test.dart"], "dart test"),
        (["App.csproj", "tests/CalcTests.cs"], "dotnet test"),
    ],
)
def test_other_ecosystems_suggest_their_own_runner(
    tmp_path: Path, files: list[str], hint: str
) -> None:
    """A project of another language is not told to run ``python -m pytest``."""
    for rel in files:
        write(tmp_path, rel, "x\n")
    project = inspect(tmp_path)
    assert project.has_tests
    assert project.hint("test") == hint


def test_a_makefile_tests_target(tmp_path: Path) -> None:
    write(tmp_path, "Makefile", "tests:\n\t./run.sh\n")
    project = inspect(tmp_path)
    assert project.has_tests and project.hint("test") == "make tests"


def test_tests_in_skipped_folders_do_not_count(tmp_path: Path) -> None:
    write(tmp_path, "node_modules/lib/test_x.py")
    write(tmp_path, ".venv/lib/tests/test_y.py")
    write(tmp_path, "app.py")
    assert not inspect(tmp_path).has_tests


def test_npm_default_test_script_is_not_tests(tmp_path: Path) -> None:
    scripts = {"test": 'echo "Error: no test specified" && exit 1'}
    write(tmp_path, "package.json", json.dumps({"scripts": scripts}))
    assert not inspect(tmp_path).has_tests
    scripts = {"test": "vitest run", "lint": "eslint .", "build": "tsc"}
    write(tmp_path, "package.json", json.dumps({"scripts": scripts}))
    project = inspect(tmp_path)
    assert project.has_tests and project.test == "npm test"
    assert project.lint == "npm run lint" and project.build == "npm run build"


def test_makefile_targets(tmp_path: Path) -> None:
    write(tmp_path, "Makefile", "VAR := 1\ncheck: lint\n\tpytest\nlint:\n\truff check .\n")
    project = inspect(tmp_path)
    assert project.has_tests
    assert project.lint == "make lint"


def test_python_tool_config(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.ruff]\nline-length = 100\n[tool.mypy]\n")
    project = inspect(tmp_path)
    assert not project.has_tests
    assert project.lint == "ruff check ."
    assert project.typecheck == "mypy ."
    assert project.verifiable


def test_missing_workspace(tmp_path: Path) -> None:
    assert not inspect(tmp_path / "nope").has_tests
