"""Installing from marketplaces shaped like the public ones (SPEC §11): what lands in
``$MYCODE_HOME/plugins/<name>/``, how the CLI names what it installed, and entries that are not
simply there. Our own fixtures of the same shape, built in temporary folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ap_helpers import commit_all
from cc_helpers import Env
from market_helpers import cc_plugin, cli, registry, set_entry, write_market

from mycode_core.testing import run_cli


def _linked_market(tmp_path: Path) -> tuple[Path, Path]:
    """A marketplace whose plugin ``linky`` links to a file outside the marketplace, to ``/``,
    to a folder the plugin is in, to nothing, to a shared folder elsewhere in the marketplace
    (Claude Code keeps such links between plugins) and to a file of its own."""
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("SECRET outside the plugin\n")
    market = tmp_path / "market"
    plugin = cc_plugin(market / "plugins" / "linky", "linky")
    shared = market / "shared" / "common"
    shared.mkdir(parents=True)
    (shared / "SKILL.md").write_text("---\nname: common\ndescription: shared\n---\nShared.\n")
    (plugin / "skills").mkdir()
    (plugin / "skills" / "common").symlink_to("../../../shared/common")
    (plugin / "commands" / "secret.md").symlink_to(secret)
    (plugin / "commands" / "alias.md").symlink_to("go.md")
    (plugin / "root").symlink_to("/")
    (plugin / "up").symlink_to("../..")
    (plugin / "dangling").symlink_to("no-such-file")
    write_market(market, [{"name": "linky", "source": "./plugins/linky"}])
    return market, secret


def _assert_contained(installed: Path) -> None:
    for current, dirs, files in os.walk(installed):
        for name in dirs + files:
            path = Path(current) / name
            if path.is_symlink():
                target = Path(os.path.realpath(path))
                assert target.is_relative_to(installed.resolve()), (path, target)
    assert not os.path.lexists(installed / "commands" / "secret.md")
    assert not os.path.lexists(installed / "root") and not os.path.lexists(installed / "up")
    assert not os.path.lexists(installed / "dangling")
    skill = installed / "skills" / "common" / "SKILL.md"
    assert not (installed / "skills" / "common").is_symlink() and "Shared." in skill.read_text()
    assert os.readlink(installed / "commands" / "alias.md") == "go.md"


def test_symlinks_never_bring_in_files_from_outside_the_marketplace(
    env: Env, tmp_path: Path
) -> None:
    market, secret = _linked_market(tmp_path)
    out = cli(env, "install", f"linky@{market}")
    assert out.rc == 0, out.stderr
    installed = env.home / "plugins" / "linky"
    _assert_contained(installed)
    assert "left out 4 symlink(s)" in out.stdout and "commands/secret.md" in out.stdout
    listed = [r for r in json.loads(cli(env).stdout) if r.get("name") == "linky"]
    assert sorted(listed[0]["contributes"]["commands"]) == ["alias", "go"]
    secret.write_text("changed outside\n")  # nothing of the plugin depends on it any more
    assert "up to date" in cli(env, "update", "linky", "--yes").stdout

    assert cli(env, "uninstall", "linky").rc == 0
    commit_all(market)  # the same marketplace as a git repository
    out = cli(env, "install", f"linky@file://{market}")
    assert out.rc == 0, out.stderr
    _assert_contained(installed)
    same = cli(env, "update", "linky", "--yes")
    assert same.rc == 0 and "up to date" in same.stdout, same.stderr


def test_a_plugin_folder_installed_directly_keeps_only_its_own_links(
    env: Env, tmp_path: Path
) -> None:
    market, _secret = _linked_market(tmp_path)
    out = cli(env, "install", str(market / "plugins" / "linky"))
    assert out.rc == 0, out.stderr
    installed = env.home / "plugins" / "linky"
    assert not os.path.lexists(installed / "commands" / "secret.md")
    assert not os.path.lexists(installed / "skills" / "common")  # outside this folder now
    assert os.readlink(installed / "commands" / "alias.md") == "go.md"


def test_installs_are_named_by_their_marketplace_not_a_staging_folder(
    env: Env, tmp_path: Path
) -> None:
    market = write_market(
        tmp_path / "market",
        [
            {"name": "fmt", "source": "./plugins/fmt"},
            {"name": "odd", "source": "./plugins/odd"},
        ],
    )
    cc_plugin(market / "plugins" / "fmt", "fmt")
    cc_plugin(market / "plugins" / "odd", "odd name!")
    head = commit_all(market)
    out = cli(env, "install", f"fmt@{market}")
    assert out.rc == 0, out.stderr
    assert ".staging" not in out.stdout and f"from fmt@{market}" in out.stdout
    assert registry(env)["fmt"]["rev"] == head  # which commit of the marketplace
    odd = cli(env, "install", f"odd@{market}")
    assert odd.rc == 1 and ".staging" not in odd.stderr and f"odd@{market}" in odd.stderr


def test_renamed_duplicate_missing_and_unsupported_entries(env: Env, tmp_path: Path) -> None:
    """``renames`` (old name → new, as the official marketplace carries) is followed; a name
    listed twice is refused; a missing name among many gets close matches, not the whole
    list; a source type mycode cannot fetch is named."""
    many = [{"name": f"tool-{i:03d}", "source": f"./plugins/tool-{i:03d}"} for i in range(40)]
    market = write_market(
        tmp_path / "market",
        [
            {"name": "fmt", "source": "./plugins/fmt"},
            {"name": "twice", "source": "./plugins/fmt"},
            {"name": "twice", "source": "./plugins/other"},
            {"name": "from-npm", "source": {"source": "npm", "package": "@team/x"}},
            *many,
        ],
        renames={
            "formatter": "code-fmt",
            "code-fmt": "fmt",
            "loop-a": "loop-b",
            "loop-b": "loop-a",
        },
    )
    cc_plugin(market / "plugins" / "fmt", "fmt")
    out = cli(env, "install", f"formatter@{market}")
    assert out.rc == 0, out.stderr
    assert "installed fmt " in out.stdout and "renamed from formatter" in out.stdout
    assert registry(env)["fmt"]["marketplace_entry"] == "fmt"
    twice = cli(env, "install", f"twice@{market}")
    assert twice.rc == 1 and "lists 'twice' 2 times" in twice.stderr
    missing = cli(env, "install", f"tool017@{market}")
    assert missing.rc == 1 and "it lists 43 plugins; did you mean tool-017" in missing.stderr
    assert "tool-039" not in missing.stderr and len(missing.stderr.splitlines()) == 1
    looped = cli(env, "install", f"loop-a@{market}")
    assert looped.rc == 1 and "no plugin named 'loop-a'" in looped.stderr
    npm = cli(env, "install", f"from-npm@{market}")
    assert npm.rc == 1 and "source of type 'npm'" in npm.stderr
    assert sorted(os.listdir(env.home / "plugins")) == [".staging", "fmt"]
    assert os.listdir(env.home / "plugins" / ".staging") == []


def test_update_reads_a_strict_false_entry_again(env: Env, tmp_path: Path) -> None:
    """The entry is the plugin's manifest, so a new version of the entry (the official
    ``*-lsp`` entries change their ``lspServers`` there) is what ``update`` installs."""
    market = tmp_path / "market"
    folder = market / "plugins" / "inline"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "one.md").write_text("One\n")
    (folder / "commands" / "two.md").write_text("Two\n")
    entry = {"name": "inline", "source": "./plugins/inline", "strict": False}
    write_market(market, [entry | {"version": "1.0.0", "commands": ["./commands/one.md"]}])
    commit_all(market)
    for where in (f"file://{market}", str(market)):
        out = cli(env, "install", f"inline@{where}")
        assert out.rc == 0, out.stderr
        set_entry(
            market, "inline", version="1.1.0", commands=["./commands/one.md", "./commands/two.md"]
        )
        commit_all(market)
        updated = cli(env, "update", "inline", "--yes")
        assert updated.rc == 0 and "inline: updated" in updated.stdout, updated.stderr
        row = [r for r in json.loads(cli(env).stdout) if r.get("name") == "inline"][0]
        assert row["version"] == "1.1.0" and sorted(row["contributes"]["commands"]) == [
            "one",
            "two",
        ]
        assert '"1.1.0"' in registry(env)["inline"]["manifest"]
        assert "up to date" in cli(env, "update", "inline", "--yes").stdout
        set_entry(market, "inline", name="gone")
        commit_all(market)
        refused = cli(env, "update", "inline", "--yes")
        assert refused.rc == 1 and "no plugin named 'inline'" in refused.stderr
        assert cli(env, "uninstall", "inline").rc == 0
        set_entry(market, "gone", name="inline", version="1.0.0", commands=["./commands/one.md"])
        commit_all(market)


def _codex_plugin(root: Path, name: str) -> Path:
    (root / ".codex-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    (root / "skills" / "tidy").mkdir(parents=True)
    (root / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: d\n---\nT\n")
    return root


def test_an_entry_codex_marks_not_available_is_refused(env: Env, tmp_path: Path) -> None:
    """Codex's ``policy.installation``: ``NOT_AVAILABLE`` is listed but refused (one line, exit
    1, nothing left); ``AVAILABLE`` (the default) and ``INSTALLED_BY_DEFAULT`` install."""
    market = tmp_path / "market"
    path = market / ".agents" / "plugins" / "marketplace.json"
    path.parent.mkdir(parents=True)
    entries = [
        {"name": name, "source": {"source": "local", "path": f"./plugins/{name}"}}
        for name in ("hidden", "shown", "default-on")
    ]
    entries[0]["policy"] = {"installation": "NOT_AVAILABLE", "authentication": "ON_INSTALL"}
    entries[1]["policy"] = {"installation": "AVAILABLE"}
    entries[2]["policy"] = {"installation": "INSTALLED_BY_DEFAULT"}
    path.write_text(json.dumps({"name": "codex-team", "plugins": entries}))
    for name in ("hidden", "shown", "default-on"):
        _codex_plugin(market / "plugins" / name, name)
    for where in (str(market), f"file://{market}"):
        refused = cli(env, "install", f"hidden@{where}")
        assert refused.rc == 1 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert "'hidden' as not available for install" in refused.stderr
        assert "NOT_AVAILABLE" in refused.stderr and refused.stdout == ""
        assert sorted(os.listdir(env.home / "plugins")) == [".staging"]
        assert os.listdir(env.home / "plugins" / ".staging") == []
        registry = env.home / "plugins.toml"
        assert not registry.exists() or "hidden" not in registry.read_text()
        assert not (env.home / "plugin-data" / "hidden").exists()
        for name in ("shown", "default-on"):
            out = cli(env, "install", f"{name}@{where}")
            assert out.rc == 0 and f"installed {name} (codex)" in out.stdout, out.stderr
            assert cli(env, "uninstall", name).rc == 0
        if not (market / ".git").exists():
            commit_all(market)  # the next round: the same marketplace as a git repository


def test_no_message_names_a_staging_folder_whichever_way_the_marketplace_comes(
    env: Env, tmp_path: Path
) -> None:
    """The ``installed`` line and a refusal's report name the plugin as ``NAME@MARKETPLACE``
    and its files relative to it, never the temporary folder they were read in: a marketplace
    folder, a git repository by path, a ``file://`` URL, one added by name, and an entry whose
    plugin is a folder of another repository."""
    other = tmp_path / "other"
    (other / "pkg" / "broken" / ".codex-plugin").mkdir(parents=True)
    (other / "pkg" / "broken" / ".codex-plugin" / "plugin.json").write_text("{not json")
    cc_plugin(other / "pkg" / "good", "good")
    commit_all(other)
    elsewhere = [
        {
            "name": n,
            "source": {"source": "git-subdir", "url": f"file://{other}", "path": f"pkg/{n}"},
        }
        for n in ("good", "broken")
    ]
    market = write_market(
        tmp_path / "market",
        [
            {"name": "fmt", "source": "./plugins/fmt"},
            {"name": "bad", "source": "./plugins/bad"},
            *elsewhere,
        ],
    )
    cc_plugin(market / "plugins" / "fmt", "fmt")
    (market / "plugins" / "bad" / ".codex-plugin").mkdir(parents=True)
    (market / "plugins" / "bad" / ".codex-plugin" / "plugin.json").write_text("{not json")
    ways = [str(market), "git", f"file://{market}", "team"]
    for way in ways:
        if way == "git":
            commit_all(market)
            way = str(market)
        if way == "team":
            assert cli(env, "marketplace", "add", f"file://{market}").rc == 0
        for good, bad in (("fmt", "bad"), ("good", "broken")):
            out = cli(env, "install", f"{good}@{way}")
            assert out.rc == 0 and f"from {good}@{way}" in out.stdout, out.stderr
            assert ".staging" not in out.stdout
            assert cli(env, "uninstall", good).rc == 0
            refused = cli(env, "install", f"{bad}@{way}")
            assert refused.rc == 1 and f"{bad}@{way} is not a valid plugin" in refused.stderr
            assert ".staging" not in refused.stderr, refused.stderr
            assert '"message": ".codex-plugin/plugin.json is not valid JSON' in refused.stderr
            assert os.listdir(env.home / "plugins" / ".staging") == []
    assert sorted(os.listdir(env.home / "plugins")) == [".staging"]


def test_an_entry_whose_source_is_a_skills_folder_installs_with_a_warning(
    env: Env, tmp_path: Path
) -> None:
    """A published marketplace points its one ``"strict": false`` entry at ``./skills`` (a
    folder of skill folders): Claude Code finds no skill in it, and neither does mycode — but
    says so, instead of an installed plugin that silently contributes nothing."""
    market = tmp_path / "market"
    for name in ("alpha-notes", "beta-notes"):
        folder = market / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nx\n")
    write_market(market, [{"name": "notes", "source": "./skills", "strict": False}])
    out = cli(env, "install", f"notes@{market}")
    assert out.rc == 0, out.stderr
    report = json.loads(cli(env, "validate", str(env.home / "plugins" / "notes")).stdout)
    [warning] = [w["message"] for w in report["warnings"]]
    assert "contributes nothing" in warning and "alpha-notes, beta-notes" in warning
    listed = run_cli(["skills", "--json"], cwd=env.workspace, home=env.home)
    assert json.loads(listed.stdout)["skills"] == []
    assert "contributes nothing" in listed.stderr


def test_entries_sharing_one_repository_get_only_the_skills_they_list(
    env: Env, tmp_path: Path
) -> None:
    """A marketplace shaped like ``anthropics/skills``: every entry is the repository's root
    (``"source": "./"``, ``"strict": false``) and lists its own skill folders. Each installed
    plugin gave every skill of the root's ``skills/`` (three of them, then the second
    plugin's as ``docs:…``); now each gives the skills its entry lists, as in Claude Code."""
    market = tmp_path / "market"
    for name in ("pdf", "sheet", "art"):
        folder = market / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nx\n")
    entries = [
        {
            "name": "docs",
            "source": "./",
            "strict": False,
            "skills": ["./skills/pdf", "./skills/sheet"],
        },
        {"name": "examples", "source": "./", "strict": False, "skills": ["./skills/art"]},
    ]
    write_market(market, entries)
    out = cli(env, "install", f"docs@{market}", f"examples@{market}")
    assert out.rc == 0, out.stderr
    listing = run_cli(["plugins"], cwd=env.workspace, home=env.home).stdout
    rows = {r["name"]: r for r in json.loads(listing) if r.get("format")}
    assert rows["docs"]["contributes"]["skills"] == ["pdf", "sheet"]
    assert rows["examples"]["contributes"]["skills"] == ["art"]
    listed = json.loads(run_cli(["skills", "--json"], cwd=env.workspace, home=env.home).stdout)
    assert [(s["name"], s["plugin"]) for s in listed["skills"]] == [
        ("art", "examples"),
        ("pdf", "docs"),
        ("sheet", "docs"),
    ]
