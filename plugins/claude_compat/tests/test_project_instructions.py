"""The project's CLAUDE.md files in the system prompt (from the workspace root down to the
current folder, after the AGENTS.md files), and their ``@path`` imports: inside the workspace
only, each file once, code left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_claude_compat.instructions import import_paths

from mycode_core.testing import FakeOpenAIServer, run_cli


def test_which_words_are_imports() -> None:
    text = (
        "See @AGENTS.md and @docs/style.md, ask @maintainer, mail a@b.org.\n"
        "`@not/this.md` is code\n"
        "```\n@nor/this.md\n```\n"
        "Also @~/notes/mine.md and @../shared/rules.md.\n"
    )
    assert import_paths(text) == [
        "AGENTS.md",
        "docs/style.md",
        "~/notes/mine.md",
        "../shared/rules.md",
    ]


def _first_system_prompt(
    workspace: Path, home: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[Any, str]:
    """One ``-p`` run in ``workspace`` (started in ``cwd``, by default the workspace): its
    result and the system prompt of its first request."""
    with FakeOpenAIServer() as server:
        run = run_cli(
            ["-p", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", "x"]
            + ["--output-format", "stream-json", "--cwd", str(workspace)],
            cwd=cwd or workspace,
            home=home,
            env=env,
        )
        assert run.rc == 0, run.stderr
        return run, server.requests[0].messages[0]["content"]


def test_claude_md_files_from_the_root_down_after_the_agents_md_files(tmp_path: Path) -> None:
    workspace, home = (tmp_path / "ws").resolve(), tmp_path / "home"
    sub = workspace / "pkg" / "sub"
    sub.mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("ROOT-RULE: use tabs\n")
    (workspace / "CLAUDE.md").write_text("CLAUDE-RULE: be brief\n")
    (workspace / "pkg" / "AGENTS.md").write_text("PKG-RULE: no globals\n")
    (workspace / "pkg" / "CLAUDE.md").write_text("PKG-CLAUDE-RULE\n")
    (workspace / "unrelated").mkdir()
    (workspace / "unrelated" / "CLAUDE.md").write_text("UNRELATED-RULE\n")
    _, text = _first_system_prompt(workspace, home, cwd=sub)
    order = ["ROOT-RULE", "PKG-RULE", "CLAUDE-RULE", "PKG-CLAUDE-RULE"]
    assert all(marker in text for marker in order)
    assert [text.find(marker) for marker in order] == sorted(text.find(m) for m in order)
    assert "UNRELATED-RULE" not in text
    assert "# Project instructions (CLAUDE.md)" in text
    assert "# Project instructions (pkg/CLAUDE.md)" in text


def test_agents_override_md_leaves_claude_md_alone(tmp_path: Path) -> None:
    """Codex's ``AGENTS.override.md`` replaces ``AGENTS.md`` in its folder, not ``CLAUDE.md``."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("SHARED-RULE\n")
    (workspace / "AGENTS.override.md").write_text("LOCAL-OVERRIDE-RULE\n")
    (workspace / "CLAUDE.md").write_text("CLAUDE-RULE\n")
    _, text = _first_system_prompt(workspace, home)
    assert "SHARED-RULE" not in text and "LOCAL-OVERRIDE-RULE" in text
    assert "CLAUDE-RULE" in text and "(AGENTS.override.md)" in text


def test_claude_codes_other_memory_files_are_read_and_import(tmp_path: Path) -> None:
    """``.claude/CLAUDE.md`` and the personal ``CLAUDE.local.md`` are project instructions as
    in Claude Code, after ``CLAUDE.md``, and their ``@path`` imports are followed."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    (workspace / "CLAUDE.md").write_text("TOP-RULE\n")
    (workspace / ".claude" / "CLAUDE.md").write_text("DOT-CLAUDE-RULE, see @style.md\n")
    (workspace / ".claude" / "style.md").write_text("IMPORTED-STYLE\n")
    (workspace / "CLAUDE.local.md").write_text("MY-LOCAL-RULE\n")
    _, text = _first_system_prompt(workspace, home)
    order = ["TOP-RULE", "DOT-CLAUDE-RULE", "IMPORTED-STYLE", "MY-LOCAL-RULE"]
    assert [text.find(marker) for marker in order] == sorted(text.find(m) for m in order)
    assert all(marker in text for marker in order)
    assert "(.claude/CLAUDE.md)" in text and "(CLAUDE.local.md)" in text


def test_imports_reach_the_prompt_but_nothing_outside_the_workspace(tmp_path: Path) -> None:
    workspace, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    (workspace / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("PRIVATE-KEY-MATERIAL\n")
    (workspace / "AGENTS.md").write_text("Agents say hello.\n")
    (workspace / "docs" / "style.md").write_text("Use tabs. @deeper.md\n")
    (workspace / "docs" / "deeper.md").write_text("Deeper rule.\n")
    (workspace / "CLAUDE.md").write_text(
        f"@AGENTS.md\nStyle: @docs/style.md\nAnd @{outside}/secret.md\n"
    )
    run, system = _first_system_prompt(workspace, home)
    assert system.count("Agents say hello.") == 1  # already read: not imported twice
    assert "Use tabs." in system and "Deeper rule." in system
    assert "imported by docs/style.md" in system
    assert "PRIVATE-KEY-MATERIAL" not in system
    said = [e["message"] for e in run.of_type("notice")]
    assert any("secret.md" in m and "outside the workspace" in m for m in said), said


def test_a_refused_import_says_why_each_spelling_once(tmp_path: Path) -> None:
    """An import outside the workspace is refused, said to be outside (not a symlink), and
    each spelling gets its notice: ``@../../x`` and ``@/abs/x`` naming one file, a missing
    file outside (refused before it is looked for), ``~/``; a symlink leading out says so."""
    workspace, home, user = tmp_path / "a" / "ws", tmp_path / "home", tmp_path / "user"
    workspace.mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("OUTSIDE-TEXT\n")
    (user / ".aws").mkdir(parents=True)
    (user / ".aws" / "credentials").write_text("AWS-SECRET\n")
    (workspace / "link.md").symlink_to(tmp_path / "outside.txt")
    (workspace / "CLAUDE.md").write_text(
        f"@{tmp_path}/outside.txt @../../outside.txt @../../missing.txt @~/.aws/credentials "
        "@link.md\n"
    )
    run, system = _first_system_prompt(workspace, home, {"HOME": str(user)})
    assert "OUTSIDE-TEXT" not in system and "AWS-SECRET" not in system
    said = [e["message"] for e in run.of_type("notice")]
    for spelling in (f"{tmp_path}/outside.txt", "../../outside.txt", "../../missing.txt",
                     "~/.aws/credentials"):  # fmt: skip
        line = next(m for m in said if m.startswith(f"@{spelling} in CLAUDE.md: "))
        assert "is outside the workspace" in line and "symlink" not in line, line
    link = next(m for m in said if m.startswith("@link.md in CLAUDE.md: "))
    assert "link.md is not read: it is a symlink leading outside the workspace" in link


def test_a_bare_word_naming_a_file_is_an_import_refused_with_its_notice(tmp_path: Path) -> None:
    """``@envlink`` (no ``/`` nor ``.``), a symlink to ``/proc/self/environ``, was taken for a
    handle and dropped without a word; a bare word naming a file next to CLAUDE.md is an import
    as Claude Code reads it: refused with its notice like ``@/proc/self/environ``, and a plain
    file imported. A word naming nothing stays a handle."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    (workspace / "envlink").symlink_to("/proc/self/environ")
    (workspace / "RULES").write_text("Bare rule.\n")
    (workspace / "CLAUDE.md").write_text("@envlink @RULES ask @maintainer\n")
    run, system = _first_system_prompt(workspace, home, {"MYCODE_CANARY": "ENV-CANARY-1"})
    assert "ENV-CANARY-1" not in system and "Bare rule." in system
    said = [e["message"] for e in run.of_type("notice")]
    line = next(m for m in said if m.startswith("@envlink in CLAUDE.md: "))
    assert "envlink is not read: it is a symlink leading outside the workspace" in line
    assert not any("maintainer" in m for m in said)
    assert import_paths("@envlink @RULES @maintainer", workspace) == ["envlink", "RULES"]
