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
    "QA_CREDS", "QA_PRIVKEY", "QA_ACCESSKEY", "QA_BEARER", "QA_TOKENS", "QA_APITOKEN_V2",
    "QA_SESSION",
]  # fmt: skip
VALUES = {
    "DATABASE_URL": f"postgres://app:{SECRET}@db:5432/app",
    "REDIS_URL": f"redis://:{SECRET}@cache:6379",
    "QUERY_URL": f"postgres://h/db?sslmode=off&Password={SECRET}",
    "QA_CONN": f"Server=h;User Id=u;Password={SECRET}",
    "ODBC": f"Driver=x; PWD = {SECRET};",
}
"""Variables secret by value: a URL with a password, a ``password=`` in a URL's query or a
connection string."""
KEPT = [
    "GIT_AUTHOR_NAME",
    "GIT_CONFIG_KEY_0",
    "TOKENIZERS_PARALLELISM",
    "XAUTHORITY",
    "LESSKEY",
    "SSH_AGENT_PID",
    "XDG_SESSION_TYPE",  # what a session (desktop, D-Bus, tmux) needs is no secret
    "DBUS_SESSION_BUS_ADDRESS",
    "SESSION_MANAGER",
    "DESKTOP_SESSION",
    "TMUX",
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
    for name, value in VALUES.items():
        monkeypatch.setenv(name, value)
    for name in KEPT:
        monkeypatch.setenv(name, "kept-value")
    monkeypatch.setenv("SITE_URL", "https://example.com:8080/a@b")
    monkeypatch.setenv("SEARCH_URL", "https://example.com/?q=password&pwdx=1")

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
    assert "SEARCH_URL=https://example.com/?q=password&pwdx=1" in out
    kept = run(sandbox={"mode": mode, "env_passthrough": ["DATABASE_URL", "STRIPE_SK"]})
    assert f"DATABASE_URL=postgres://app:{SECRET}@db" in kept
    assert f"STRIPE_SK={SECRET}" in kept and f"GROQ_KEY={SECRET}" not in kept
