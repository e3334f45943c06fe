"""Start-up cost of installed folder plugins (SPEC §11): 20 Agent Plugins folders with 10
skills each (no MCP) under ``$MYCODE_HOME/plugins/``, against a home with none.

1. What the folder plugins add to a start-up, in one fresh interpreter per sample (the modules
   a run imports are imported first, untimed): reading the installed folders (claude_compat's
   loader), discovering their skills (the skills plugin's catalog, through ``register_skills``'s
   locations) and rendering the skills section of the system prompt. "warm" is every start
   after the first (schema-check cache and skills index written); "cold" the first start of a
   fresh home (every manifest checked with jsonschema, every ``SKILL.md`` parsed).
   Goal: warm difference ≤ 30 ms.
2. End to end, for information: one ``mycode -p`` run with a scripted model, interleaved; on a
   loaded machine its noise is far larger than the difference measured in 1.

    uv run python bench/bench_folder_plugins.py [--runs 11] [--plugins 20] [--skills 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from common import (
    bench_dir,
    clean_env,
    interleaved,
    median_ms,
    mycode_script,
    time_once,
    write_turns,
)

GOAL_MS = 30.0
SAMPLE = r"""
import json, os, sys, time
from pathlib import Path
import jsonschema, mycode_core.config, mycode_core.records, mycode_core.events  # a run has these
from mycode_claude_compat import plugin  # noqa: F401 - both entry-point modules
from mycode_skills import plugin as skills_plugin  # noqa: F401
from mycode_skills.discovery import Catalog, Location, default_locations
from mycode_skills.listing import listing
from mycode_skills.state import index_file
home = Path(os.environ["MYCODE_HOME"]); ws = Path(sys.argv[1])
settings = mycode_core.config.load_settings(ws, home, {})
started = time.perf_counter(); cpu = time.process_time()
from mycode_claude_compat.loading import load
loaded = load(ws, home, settings)
extra = [Location(d, "plugin:" + f.name, confined=f.root) for f in loaded.folders
         for d in f.skill_dirs]
catalog = Catalog(default_locations(ws, home, ws), extra=lambda: extra,
                  index_file=index_file(home))
text = listing(catalog.refresh().sorted())
print(json.dumps({"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                  "skills": len(catalog.snapshot.skills), "folders": len(loaded.folders)}))
"""


def sample(home: Path, workspace: Path) -> dict[str, float]:
    """One fresh-interpreter sample of SAMPLE."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", SAMPLE, str(workspace)],
        env=clean_env(home),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


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
    homes = {
        "none": make_home(root / "none", 0, 0),
        "plugins": make_home(root / "with", args.plugins, args.skills),
    }
    parts: dict[str, dict[str, list[float]]] = {}
    for home in homes.values():
        sample(home, workspace)  # warm-up: caches written
    for _ in range(args.runs):
        for name, home in homes.items():
            got = sample(home, workspace)
            for key in ("wall", "cpu"):
                parts.setdefault(name, {}).setdefault(key, []).append(got[key])
    assert sample(homes["plugins"], workspace)["skills"] == args.plugins * args.skills
    cold_parts: dict[str, list[float]] = {"wall": [], "cpu": []}
    for index in range(args.cold):
        fresh = make_home(root / f"cold-part-{index}", args.plugins, args.skills)
        got = sample(fresh, workspace)
        cold_parts["wall"].append(got["wall"])
        cold_parts["cpu"].append(got["cpu"])
        shutil.rmtree(fresh.parent)
    print(f"{args.plugins} folder plugins x {args.skills} skills; fresh interpreter per sample")
    for name in homes:
        print(
            f"  warm {name}: wall {median_ms(parts[name]['wall']):.1f} ms, "
            f"cpu {median_ms(parts[name]['cpu']):.1f} ms"
        )
    added = median_ms(parts["plugins"]["wall"]) - median_ms(parts["none"]["wall"])
    print(
        f"  warm added: +{added:.1f} ms wall (goal <= {GOAL_MS:.0f} ms: "
        f"{'met' if added <= GOAL_MS else 'NOT met'})"
    )
    print(
        f"  cold (fresh home): wall {median_ms(cold_parts['wall']):.1f} ms, "
        f"cpu {median_ms(cold_parts['cpu']):.1f} ms"
    )
    model = write_turns(root / "script.json", [{"content": "done"}])
    command = [mycode_script(), "-p", "hi", "--model", model, "--cwd", str(workspace)]
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
    print(f"end to end, mycode -p, {args.runs} interleaved runs (information only)")
    print(f"warm: none {warm['none']:.1f} ms, plugins {warm['plugins']:.1f} ms, +{diff:.1f} ms")
    print(
        f"cold: none {cold_ms['none']:.1f} ms, plugins {cold_ms['plugins']:.1f} ms, "
        f"+{cold_ms['plugins'] - cold_ms['none']:.1f} ms"
    )


if __name__ == "__main__":
    main()
