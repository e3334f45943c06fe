"""Start-up cost of installed folder plugins (SPEC §11): 20 Agent Plugins folders with 10
skills each (no MCP) under ``$MYCODE_HOME/plugins/``, against a home with none.

Each sample is one ``mycode -p`` run with a scripted model answering at once (the whole
start-up: plugins, folder reading, skills discovery, the system prompt). The variants are
interleaved (``--runs``, default 11, medians). "warm" is every run after the first one (file
cache warm, skills index written); "cold" is the first run of a fresh home (no skills index,
every ``SKILL.md`` parsed), sampled ``--cold`` times with a new home each.
Goal: warm difference ≤ 30 ms.

    uv run python bench/bench_folder_plugins.py [--runs 11] [--plugins 20] [--skills 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from common import bench_dir, clean_env, interleaved, median_ms, mycode_script, time_once, write_turns

GOAL_MS = 30.0
SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"


def make_home(root: Path, plugins: int, skills: int) -> Path:
    """A ``MYCODE_HOME`` with ``plugins`` installed folder plugins of ``skills`` skills each."""
    home = root / "home"
    for p in range(plugins):
        folder = home / "plugins" / f"bench-plugin-{p:02d}"
        folder.mkdir(parents=True)
        name = f"bench-plugin-{p:02d}"
        (folder / "plugin.json").write_text(json.dumps({"$schema": SCHEMA, "name": name}))
        for s in range(skills):
            skill = folder / "skills" / f"p{p:02d}-skill-{s:02d}"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(
                f"---\nname: p{p:02d}-skill-{s:02d}\ndescription: Handles task {s} of plugin "
                f"{p}; use when the user asks for it.\n---\n" + "Step.\n" * 30
            )
    home.mkdir(parents=True, exist_ok=True)
    return home


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--plugins", type=int, default=20)
    parser.add_argument("--skills", type=int, default=10)
    args = parser.parse_args()
    root = bench_dir("folder-plugins")
    workspace = root / "ws"
    workspace.mkdir()
    model = write_turns(root / "script.json", [{"content": "done"}])
    command = [mycode_script(), "-p", "hi", "--model", model, "--cwd", str(workspace)]
    homes = {
        "none": make_home(root / "none", 0, 0),
        "plugins": make_home(root / "with", args.plugins, args.skills),
    }
    samples = interleaved(homes, args.runs, lambda home: time_once(command, clean_env(home)))
    warm = {name: median_ms(values) for name, values in samples.items()}
    cold: dict[str, list[float]] = {"none": [], "plugins": []}
    for index in range(args.cold):
        for name, count in (("none", 0), ("plugins", args.plugins)):
            fresh = make_home(root / f"cold-{name}-{index}", count, args.skills)
            cold[name].append(time_once(command, clean_env(fresh)))
            shutil.rmtree(fresh.parent)
    cold_ms = {name: median_ms(values) for name, values in cold.items()}
    diff = warm["plugins"] - warm["none"]
    print(f"{args.plugins} folder plugins x {args.skills} skills, {args.runs} runs")
    print(f"warm: none {warm['none']:.1f} ms, plugins {warm['plugins']:.1f} ms, +{diff:.1f} ms")
    print(
        f"cold: none {cold_ms['none']:.1f} ms, plugins {cold_ms['plugins']:.1f} ms, "
        f"+{cold_ms['plugins'] - cold_ms['none']:.1f} ms"
    )
    print(f"goal warm <= {GOAL_MS:.0f} ms: {'met' if diff <= GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
