"""Two folder plugins shipping a skill of the same name (real Codex plugins do: a
``react-best-practices`` in two plugins). The first plugin keeps the plain name (SPEC §11:
skills keep their names); the other is listed under Claude Code's namespaced name
``plugin:skill`` — nothing is lost. ``mycode skills`` says so, naming both plugins; a run
does not tell it every time (discord, telegram and imessage all ship ``access``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cc_helpers import Env, notices

from mycode_core.testing import FakeOpenAIServer, run_cli, turn


def _codex_with_skill(root: Path, plugin: str, body: str) -> Path:
    (root / ".codex-plugin").mkdir(parents=True)
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": plugin}))
    skill = root / "skills" / "lint-rules"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: lint-rules\ndescription: Lint rules of {plugin}.\n---\n{body}\n"
    )
    return root


def _load(name: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "load_skill", "arguments": {"name": name}}]}


def _listed(env: Env, *folders: Path) -> dict[str, Any]:
    args = ["skills", "--json"]
    for folder in folders:
        args += ["--plugin-dir", str(folder)]
    out = run_cli(args, cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    return json.loads(out.stdout)


def test_the_second_plugins_skill_is_listed_as_plugin_colon_name(env: Env, tmp_path: Path) -> None:
    alpha = _codex_with_skill(tmp_path / "alpha", "alpha", "Alpha body.")
    beta = _codex_with_skill(tmp_path / "beta", "beta", "Beta body.")
    data = _listed(env, alpha, beta)
    rows = {s["name"]: s["plugin"] for s in data["skills"]}
    assert rows == {"lint-rules": "alpha", "beta:lint-rules": "beta"}
    [problem] = data["problems"]
    assert "alpha" in problem and "beta" in problem and "'beta:lint-rules'" in problem
    # deterministic: the order of the folders decides, the other way round too
    again = _listed(env, beta, alpha)
    assert {s["name"]: s["plugin"] for s in again["skills"]} == {
        "lint-rules": "beta",
        "alpha:lint-rules": "alpha",
    }


def test_both_same_named_skills_load_in_a_run(env: Env, tmp_path: Path) -> None:
    alpha = _codex_with_skill(tmp_path / "alpha", "alpha", "Alpha body.")
    beta = _codex_with_skill(tmp_path / "beta", "beta", "Beta body.")
    turns = [
        _load("lint-rules"),
        _load("beta:lint-rules"),
        _load("alpha:lint-rules"),
        {"content": "done"},
    ]
    result = env.run(turns, "--plugin-dir", str(alpha), "--plugin-dir", str(beta))
    assert result.rc == 0, result.stderr
    outputs = [r["content"] for r in result.of_type("tool_result")]
    assert [r["is_error"] for r in result.of_type("tool_result")] == [False] * 3
    assert "Alpha body." in outputs[0] and "Beta body." in outputs[1]
    assert "Alpha body." in outputs[2]
    assert not [n for n in notices(result) if "lint-rules" in n]


def test_installed_plugins_with_the_same_skill_are_ordered_by_name(
    env: Env, tmp_path: Path
) -> None:
    for plugin in ("zeta", "beta"):
        folder = _codex_with_skill(tmp_path / "src" / plugin, plugin, f"{plugin} body.")
        out = run_cli(["plugins", "install", str(folder)], cwd=env.workspace, home=env.home)
        assert out.rc == 0, out.stderr
    data = _listed(env)
    assert {s["name"]: s["plugin"] for s in data["skills"]} == {
        "lint-rules": "beta",
        "zeta:lint-rules": "zeta",
    }
    out = run_cli(["skills", "show", "zeta:lint-rules", "--json"], cwd=env.workspace, home=env.home)
    assert out.rc == 0, out.stderr
    assert json.loads(out.stdout)["body"].strip() == "zeta body."


def test_each_same_named_skill_answers_to_its_plugins_command(env: Env, tmp_path: Path) -> None:
    """``/alpha:lint-rules`` and ``/beta:lint-rules`` run each plugin's own skill; the
    namespaced one gets no second prefix (``/beta:beta:lint-rules`` is no command)."""
    alpha = _codex_with_skill(tmp_path / "alpha", "alpha", "Alpha body.")
    beta = _codex_with_skill(tmp_path / "beta", "beta", "Beta body.")

    def first_user_message(prompt: str) -> str:
        with FakeOpenAIServer([turn("done")]) as server:
            args = [*server.cli_args(prompt), "--completion-policy", "off"]
            out = run_cli(
                [*args, "--plugin-dir", str(alpha), "--plugin-dir", str(beta)],
                cwd=env.workspace,
                home=env.home,
            )
            if out.rc == 2:  # an unknown command: nothing is sent
                return out.stderr
            assert out.rc == 0, out.stderr
            return str(server.chat_requests[0].messages[-1]["content"])

    assert "Alpha body." in first_user_message("/alpha:lint-rules check")
    assert "Beta body." in first_user_message("/beta:lint-rules check")
    assert "Unknown command /beta:beta:lint-rules" in first_user_message("/beta:beta:lint-rules x")
