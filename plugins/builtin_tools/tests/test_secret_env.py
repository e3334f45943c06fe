"""Secret-bearing variables never reach a command, sandboxed or not (SPEC §8): by name part
(``*_KEY``, ``PGPASSWORD``, ``*_DSN``, ``*_AUTH_*``…) and by value (a URL with a password);
what commands need stays, and ``[sandbox] env_passthrough`` keeps one on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.tools import run_command as rc

from mycode_core.config import Settings
from mycode_core.records import RunContext

SECRET = "s3cr3t-env-value"
NAMES = [
    "PGPASSWORD", "PASSWORD", "API_KEY", "OPENROUTER_KEY", "GROQ_KEY", "PRIVATE_KEY",
    "GPG_PASSPHRASE", "SECRET_KEY_BASE", "STRIPE_SK", "SENTRY_DSN", "SLACK_WEBHOOK_URL",
    "DOCKER_AUTH_CONFIG", "CI_JOB_JWT", "MYSQL_PWD", "GITLAB_PAT", "SESSION_COOKIE", "KEY",
]  # fmt: skip
KEPT = [
    "GIT_AUTHOR_NAME",
    "GIT_CONFIG_KEY_0",
    "TOKENIZERS_PARALLELISM",
    "XAUTHORITY",
    "LESSKEY",
    "SSH_AGENT_PID",
]
MODES = [
    "off",
    pytest.param(
        "on", marks=pytest.mark.skipif(sandbox.bwrap_path() is None, reason="no bubblewrap")
    ),
]


@pytest.mark.parametrize("mode", MODES)
def test_secret_variables_never_reach_a_command(
    workspace: Path, home: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NAMES:
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{SECRET}@db:5432/app")
    monkeypatch.setenv("REDIS_URL", f"redis://:{SECRET}@cache:6379")
    for name in KEPT:
        monkeypatch.setenv(name, "kept-value")
    monkeypatch.setenv("SITE_URL", "https://example.com:8080/a@b")

    def run(**settings: object) -> str:
        context = RunContext(
            workspace=workspace, home=home, settings=Settings(**settings), session_id="e"
        )
        result = rc.run_command.handler({"command": "env"}, context)
        assert result.metadata.get("sandboxed") is (mode == "on")
        return result.text()

    out = run(sandbox=mode, permission_mode="default")
    assert SECRET not in out
    for name in ["PATH", "HOME", "PWD", *KEPT]:
        assert f"\n{name}=" in f"\n{out}", name
    assert "SITE_URL=https://example.com:8080/a@b" in out
    kept = run(sandbox={"mode": mode, "env_passthrough": ["DATABASE_URL", "STRIPE_SK"]})
    assert f"DATABASE_URL=postgres://app:{SECRET}@db" in kept
    assert f"STRIPE_SK={SECRET}" in kept and f"GROQ_KEY={SECRET}" not in kept
