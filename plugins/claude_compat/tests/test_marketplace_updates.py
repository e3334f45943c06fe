"""Marketplaces over time (SPEC §11): ``plugins update`` follows an entry whose ``source``
moved, and one command fetches each marketplace once, however many of its plugins it installs
or updates."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from ap_helpers import commit_all
from cc_helpers import Env
from market_helpers import (
    cc_plugin,
    cli,
    clones_of,
    counting_git,
    registry,
    set_entry,
    write_market,
)


@pytest.mark.parametrize("as_git", [False, True], ids=["folder", "git"])
def test_update_follows_an_entry_whose_source_moved(env: Env, tmp_path: Path, as_git: bool) -> None:
    """The entry moves the plugin within the marketplace (files unchanged, then changed) and
    then out to a git repository of its own: each update fetches it from where the entry says
    now, shows the hash change and asks; PLUGIN_DATA stays. (Update fetched the recorded
    folder, which the move had emptied: refused until a reinstall.)"""
    market = write_market(tmp_path / "market", [{"name": "foo", "source": "./plugins/foo"}])
    cc_plugin(market / "plugins" / "foo", "foo")

    def publish() -> None:
        if as_git:
            commit_all(market)

    publish()
    where = f"file://{market}" if as_git else str(market)
    assert cli(env, "install", f"foo@{where}").rc == 0
    data = env.home / "plugin-data" / "foo" / "keep.txt"
    data.write_text("state")
    installed = env.home / "plugins" / "foo" / "commands"

    (market / "external").mkdir()
    shutil.move(market / "plugins" / "foo", market / "external" / "foo")
    set_entry(market, "foo", source="./external/foo")
    publish()
    same = cli(env, "update", "foo", "--yes")
    assert same.rc == 0 and "foo: up to date" in same.stdout, same.stderr
    assert "now from" in same.stdout and "external/foo" in same.stdout
    record = registry(env)["foo"]
    assert "external/foo" in (record.get("subdir", "") if as_git else record["source"])

    (market / "external" / "foo" / "commands" / "more.md").write_text("More.\n")
    publish()
    old = registry(env)["foo"]["hash"]
    asked = cli(env, "update", "foo")  # not a terminal, no --yes: shown, not applied
    assert asked.rc == 1 and f"foo: {old} -> sha256:" in asked.stdout, asked.stderr
    assert "--yes" in asked.stderr and not (installed / "more.md").exists()
    done = cli(env, "update", "foo", "--yes")
    assert done.rc == 0 and "foo: updated" in done.stdout, done.stderr
    assert (installed / "more.md").is_file() and data.read_text() == "state"

    repo = tmp_path / "foo-repo"
    shutil.copytree(market / "external" / "foo", repo)
    (repo / "commands" / "own.md").write_text("Own.\n")
    commit_all(repo)
    set_entry(market, "foo", source={"source": "url", "url": f"file://{repo}"})
    publish()
    out = cli(env, "update", "foo", "--yes")
    assert out.rc == 0 and "foo: updated" in out.stdout, out.stderr
    assert f"now from file://{repo}" in out.stdout
    record = registry(env)["foo"]
    assert record["source"] == f"file://{repo}" and "subdir" not in record
    assert (installed / "own.md").is_file() and data.read_text() == "state"
    assert os.listdir(env.home / "plugins" / ".staging") == []


def test_a_marketplace_is_fetched_once_per_command(env: Env, tmp_path: Path) -> None:
    """``install a@mk b@mk`` and ``update`` clone the marketplace once, not once per plugin
    (counted by a git on PATH that logs its clones); a refusal mid-way still keeps the ones
    before it and leaves nothing in staging."""
    market = write_market(
        tmp_path / "market",
        [{"name": name, "source": f"./plugins/{name}"} for name in ("a", "b", "c")],
    )
    for name in ("a", "b", "c"):
        cc_plugin(market / "plugins" / name, name)
    commit_all(market)
    path_env, log = counting_git(tmp_path)
    url = f"file://{market}"
    out = cli(env, "install", f"a@{url}", f"b@{url}", f"c@{url}", extra_env=path_env)
    assert out.rc == 0 and out.stdout.count("installed ") == 3, out.stderr
    assert clones_of(log, url) == 1
    (market / "plugins" / "b" / "commands" / "new.md").write_text("New.\n")
    commit_all(market)
    updated = cli(env, "update", "--yes", extra_env=path_env)
    assert updated.rc == 0 and "b: updated" in updated.stdout, updated.stderr
    assert "a: up to date" in updated.stdout and "c: up to date" in updated.stdout
    assert clones_of(log, url) == 2
    for name in ("a", "b"):
        assert cli(env, "uninstall", name).rc == 0
    refused = cli(env, "install", f"a@{url}", f"nope@{url}", f"b@{url}", extra_env=path_env)
    assert refused.rc == 1 and "no plugin named 'nope'" in refused.stderr
    assert "installed a " in refused.stdout and "installed b " not in refused.stdout
    assert clones_of(log, url) == 3
    assert os.listdir(env.home / "plugins" / ".staging") == []


def test_a_marketplace_folder_is_copied_once_per_command(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for a plain marketplace folder, which is copied rather than cloned."""
    from mycode_claude_compat import install, placing

    market = write_market(
        tmp_path / "market",
        [{"name": name, "source": f"./plugins/{name}"} for name in ("a", "b")],
    )
    for name in ("a", "b"):
        cc_plugin(market / "plugins" / name, name)
    fetched: list[str] = []
    real = placing.fetch

    def counted(source: placing.Source, into: Path) -> tuple[Path, str | None]:
        fetched.append(source.location)
        return real(source, into)

    monkeypatch.setattr(placing, "fetch", counted)
    done = install.install([f"a@{market}", f"b@{market}"], env.home)
    assert [item.name for item in done] == ["a", "b"]
    assert fetched.count(str(market.resolve())) == 1
    assert sorted(fetched[1:]) == [str(market.resolve() / "plugins" / n) for n in ("a", "b")]
    assert os.listdir(env.home / "plugins" / ".staging") == []


def test_an_unreachable_marketplace_falls_back_to_the_recorded_source(
    env: Env, tmp_path: Path
) -> None:
    """A plugin whose entry names another repository still updates from it when the
    marketplace itself is gone (one line says so)."""
    repo = tmp_path / "repo"
    cc_plugin(repo / "pkg" / "foo", "foo")
    commit_all(repo)
    source = {"source": "git-subdir", "url": f"file://{repo}", "path": "pkg/foo"}
    market = write_market(tmp_path / "market", [{"name": "foo", "source": source}])
    assert cli(env, "install", f"foo@{market}").rc == 0
    shutil.rmtree(market)
    (repo / "pkg" / "foo" / "commands" / "new.md").write_text("New.\n")
    commit_all(repo)
    out = cli(env, "update", "foo", "--yes")
    assert out.rc == 0 and "foo: updated" in out.stdout, out.stderr
    assert len(out.stderr.splitlines()) == 1 and "recorded source" in out.stderr
    assert (env.home / "plugins" / "foo" / "commands" / "new.md").is_file()
