"""``remember`` refuses a note holding a secret: nothing of it reaches the memory store."""

from __future__ import annotations

from pathlib import Path

from mycode_memory.secrets import find_secret

from mycode_core.testing import run_cli, script_turn, write_script

SECRETS = [
    "deploy with AWS key AKIAIOSFODNN7EXAMPLE",
    "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    "db is postgres://admin:hunter2secret@db.internal/app",
    'config: password = "correct-horse-battery"',
    "gh token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
]
HARMLESS = "the API key is read from $OPENAI_API_KEY; tests run with make check"


def test_a_note_with_a_secret_is_refused_and_never_stored(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    turns = [script_turn("remember", note=text) for text in [*SECRETS, HARMLESS]]
    script = write_script(tmp_path / "script.json", [*turns, {"content": "done"}])
    run = run_cli(["-p", "go", "--model", script, "--output-format", "stream-json"], ws, home)
    assert run.rc == 0, run.stderr
    results = [e for e in run.events if e["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True] * len(SECRETS) + [False]
    assert all("never the secret itself" in r["content"] for r in results[:-1])
    stored = "".join(p.read_text() for p in (home / "memory").rglob("*") if p.is_file())
    assert "$OPENAI_API_KEY" in stored
    for secret in ("AKIAIOSFODNN7EXAMPLE", "sk-proj-", "hunter2secret", "correct-horse", "ghp_"):
        assert secret not in stored
    assert list(ws.iterdir()) == []


def test_ordinary_notes_are_not_taken_for_secrets() -> None:
    for text in (
        HARMLESS,
        "tokens are counted with tiktoken; the password reset flow lives in auth/reset.py",
        "set API_KEY=<your key> in .env.local (never commit it)",
        "deploy: make release",
    ):
        assert find_secret(text) is None, text
