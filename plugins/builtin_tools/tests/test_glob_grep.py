"""glob and grep: .gitignore, skipped folders, ordering, modes, limits, fallback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mycode_builtin_tools import ripgrep
from mycode_builtin_tools.tools.glob_tool import compile_glob


@pytest.fixture
def tree(workspace: Path) -> Path:
    files = {
        "src/app.py": "import os\ndef main():\n    return 'Hello'\n",
        "src/util.py": "def helper():\n    return 'hello'\n",
        "src/web/page.ts": "export const x = 'HELLO';\n",
        "README.md": "hello readme\n",
        "build/gen.py": "hello generated\n",
        "node_modules/dep/index.js": "hello dep\n",
        ".venv/lib/site.py": "hello venv\n",
        "pyenv311/pyvenv.cfg": "home = /usr\n",
        "pyenv311/lib/mod.py": "hello other venv\n",
        ".git/config": "hello git\n",
        ".github/workflow.yml": "hello ci\n",
    }
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / ".gitignore").write_text("build/\n")
    now = time.time()
    for offset, rel in enumerate(["src/util.py", "src/app.py"]):
        os.utime(workspace / rel, (now + offset * 10, now + offset * 10))
    return workspace


def test_compile_glob_semantics() -> None:
    regex = compile_glob("**/*.{py,ts}")
    assert regex.match("a.py") and regex.match("x/y/z.ts") and not regex.match("a.js")
    assert compile_glob("*.py").match("a.py") and not compile_glob("*.py").match("d/a.py")
    assert compile_glob("src/[ab]?.txt").match("src/a1.txt")


def test_glob_respects_gitignore_and_skips(tree: Path, run) -> None:
    text = run("glob", pattern="**/*.py").text()
    assert "src/app.py" in text and "src/util.py" in text
    assert "build/gen.py" not in text and ".venv" not in text and "pyenv311" not in text
    assert text.splitlines()[0] == "src/app.py"  # newest first
    assert ".github/workflow.yml" in run("glob", pattern="**/*.yml").text()
    assert ".git/config" not in run("glob", pattern="**/config").text()


def test_glob_explicit_skipped_folder(tree: Path, run) -> None:
    assert "node_modules/dep/index.js" in run("glob", pattern="node_modules/**/*.js").text()


def test_glob_path_and_top_level_fallback(tree: Path, run) -> None:
    text = run("glob", pattern="*.ts", path="src").text()
    assert "src/web/page.ts" in text and "**/" in text
    assert run("glob", pattern="*.md").text() == "README.md"


def test_glob_cap_and_no_match(workspace: Path, run) -> None:
    for i in range(130):
        (workspace / f"f{i}.txt").write_text("x")
    text = run("glob", pattern="*.txt").text()
    assert len(text.splitlines()) == 101 and "30 more files" in text
    assert "No files match" in run("glob", pattern="*.nothing").text()


def test_glob_outside_refused(workspace: Path, run) -> None:
    assert run("glob", pattern="*", path="..").is_error
    assert run("glob", pattern="../*").is_error
    assert run("glob", pattern="/etc/*").is_error


def test_grep_modes(tree: Path, run) -> None:
    files = run("grep", pattern="hello").text().splitlines()
    assert files[0] == "src/util.py" or "src/util.py" in files
    assert "build/gen.py" not in files and "node_modules/dep/index.js" not in files
    content = run("grep", pattern="return", output_mode="content", path="src").text()
    assert "src/app.py:3:    return 'Hello'" in content
    count = run("grep", pattern="hello", output_mode="count", case_insensitive=True).text()
    assert "src/app.py:1" in count and "matches in" in count


def test_grep_context_glob_and_head_limit(tree: Path, run) -> None:
    text = run("grep", pattern="def main", output_mode="content", context=1).text()
    assert "src/app.py-1-import os" in text and "src/app.py-3-" in text
    only_ts = run("grep", pattern="(?i)hello", glob="*.ts").text()
    assert only_ts.strip() == "src/web/page.ts"
    limited = run("grep", pattern="(?i)hello", head_limit=1).text()
    assert "more lines not shown" in limited


def test_grep_errors(tree: Path, run) -> None:
    assert run("grep", pattern="(unclosed").is_error
    assert run("grep", pattern="x", path="../").is_error
    assert "No matches" in run("grep", pattern="zzzz_not_there").text()


def test_grep_python_fallback(tree: Path, run, monkeypatch) -> None:
    monkeypatch.setenv("MYCODE_RG", "none")
    ripgrep.rg_path.cache_clear()
    try:
        assert ripgrep.rg_path() is None
        files = run("grep", pattern="hello").text()
        assert "src/util.py" in files and "build/gen.py" not in files
        content = run("grep", pattern="return", output_mode="content", path="src").text()
        assert "src/app.py:3:    return 'Hello'" in content
        assert run("grep", pattern="(unclosed").is_error
        assert "src/app.py" in run("glob", pattern="**/*.py").text()
        assert "build/gen.py" not in run("glob", pattern="**/*.py").text()
    finally:
        monkeypatch.delenv("MYCODE_RG")
        ripgrep.rg_path.cache_clear()


def test_ripgrep_is_shipped() -> None:
    assert ripgrep.rg_path() is not None
    assert (ripgrep.rg_version() or "").startswith("ripgrep")


SEARCHED = {
    ".env": "KEY=s3cret\n", "app/.env": "KEY=other\n", "app/a.py": "KEY=1\n",
    "id.key": "KEY=k\n", "b:c.txt": "x\nKEY=2\n",
}  # fmt: skip


@pytest.mark.parametrize("rg", ["shipped", "none"])
def test_files_a_deny_rule_keeps_from_reading_are_left_out_of_searches(
    workspace: Path, new_context, run, monkeypatch: pytest.MonkeyPatch, rg: str
) -> None:
    """``read_file(**/.env)`` denied reading ``.env``, but a grep of the whole workspace
    printed its lines: Claude Code leaves the files a Read rule denies out of Grep's and
    Glob's results, and so does mycode (ripgrep or the Python search alike)."""
    from mycode_builtin_tools.tools import build_tools

    for rel, text in SEARCHED.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    if rg == "none":
        monkeypatch.setenv("MYCODE_RG", "none")
    ripgrep.rg_path.cache_clear()
    try:
        context = new_context(permissions={"deny": ["read_file(**/.env)", "Read(*.key)"]})
        tools = {tool.name: tool for tool in build_tools()}
        for mode in ("content", "files_with_matches", "count"):
            text = tools["grep"].handler({"pattern": "KEY", "output_mode": mode}, context).text()
            assert "app/a.py" in text and "b:c.txt" in text, (mode, text)
            assert ".env" not in text and "s3cret" not in text and "id.key" not in text, text
        shown = tools["grep"].handler({"pattern": "KEY", "output_mode": "content"}, context)
        assert "b:c.txt:2:KEY=2" in shown.text() and "app/a.py:1:KEY=1" in shown.text()
        listed = tools["glob"].handler({"pattern": "**/*"}, context).text()
        assert "app/a.py" in listed and ".env" not in listed and "id.key" not in listed
        assert "s3cret" in run("grep", pattern="KEY", output_mode="content").text()  # no rule
    finally:
        ripgrep.rg_path.cache_clear()


def test_a_claude_settings_read_rule_keeps_a_file_out_of_a_runs_grep(
    workspace: Path, home: Path
) -> None:
    """The same through a real run: ``Read(./.env)`` in ``.claude/settings.json`` (kept in
    an untrusted workspace: it only makes things stricter)."""
    from mycode_core.testing.cli import run_cli, write_script

    for rel, text in SEARCHED.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text('{"permissions": {"deny": ["Read(./.env)"]}}')
    grep = {"name": "grep", "arguments": {"pattern": "KEY", "output_mode": "content"}}
    model = write_script(workspace.parent / "turns.json", [{"tool_calls": [grep]}])
    result = run_cli(
        ["-p", "find KEY", "--model", model, "--output-format", "stream-json"],
        cwd=workspace,
        home=home,
    )
    assert result.rc == 0, result.stderr
    shown = result.of_type("tool_result")[0]["content"]
    assert "app/a.py:1:KEY=1" in shown and "s3cret" not in shown, shown
