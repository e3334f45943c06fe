"""Start-up cost of the skills plugin with 200 skills, and system-prompt tokens per skill.

Measures, in one fresh interpreter per sample (``--runs``, default 15, median reported):

* cold: importing the plugin, discovering 200 skills in ``$MYCODE_HOME/skills`` and
  rendering the prompt section — what a run pays at start beyond the core's own imports
  (goal: at most 30 ms); "indexed" is every session after the first (the on-disk index
  spares PyYAML and the parsing), "fresh" is the very first one (every file parsed);
* warm: one more refresh with nothing changed (what each later turn pays: stat only);
* tokens: system-prompt tokens of the section, per listed skill (offline tokenizer), and of
  the section within the default listing budget (2% of the default 128,000-token window);
* ``mycode --help`` with the plugin enabled vs ``MYCODE_DISABLE_PLUGINS=skills``.

    uv run python bench/bench_skills.py [--runs 15] [--skills 200]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import bench_options, median_ms, median_seconds, mycode_script

GOAL_MS = 30.0

SAMPLE = r"""
import json, os, sys, time
from pathlib import Path
import mycode_core.hookspecs, mycode_core.records, mycode_core.events  # a run has these
started = time.perf_counter()
cpu = time.process_time()
from mycode_skills import plugin  # noqa: F401  (the entry point module)
from mycode_skills.discovery import Catalog, default_locations
from mycode_skills.budget import listing_budget, render
from mycode_skills.state import index_file
home = Path(os.environ["MYCODE_HOME"]); ws = Path(sys.argv[1])
if sys.argv[2] == "fresh":
    index_file(home).unlink(missing_ok=True)
catalog = Catalog(default_locations(ws, home, ws), index_file=index_file(home))
text = render(list(catalog.refresh().skills.values()), listing_budget(None)).text
cold = time.perf_counter() - started
cold_cpu = time.process_time() - cpu
again = time.perf_counter()
catalog.refresh()
warm = time.perf_counter() - again
print(json.dumps({"cold": cold, "cpu": cold_cpu, "warm": warm, "parses": catalog.parses}))
"""


def make_skills(root: Path, count: int) -> None:
    """``count`` skills with descriptions of realistic length (~200 characters)."""
    for index in range(count):
        folder = root / f"skill-{index:03d}"
        (folder / "scripts").mkdir(parents=True)
        description = (
            f"Handles task family {index}: prepares inputs, runs the checks the team uses for "
            "this kind of change and reports what failed. Use when the user asks for it by "
            "name or the files involved match."
        )
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{index:03d}\ndescription: {json.dumps(description)}\n"
            "license: MIT\n---\n" + "Step one.\n" * 50,
            encoding="utf-8",
        )
        (folder / "scripts" / "run.py").write_text("print('x')\n", encoding="utf-8")


def time_help(env: dict[str, str], runs: int) -> float:
    """Median wall seconds of ``mycode --help``."""
    script = mycode_script()

    def once() -> None:
        subprocess.run([script, "--help"], env=env, stdout=subprocess.DEVNULL, check=True)

    once()  # warm-up
    return median_seconds(once, runs)


def main() -> None:
    """Run the benchmark and print the figures."""
    args = bench_options(None, runs=15, skills=200)
    from mycode_skills.budget import listing_budget, render
    from mycode_skills.discovery import Catalog, default_locations
    from mycode_skills.listing import LISTING_INTRO, listing

    from mycode_core.tokens import count_text

    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        ws.mkdir()
        make_skills(home / "skills", args.skills)
        env = {**os.environ, "MYCODE_HOME": str(home), "HOME": tmp}
        colds: list[float] = []
        fresh: list[float] = []
        warms: list[float] = []
        cpus: list[float] = []
        fresh_cpus: list[float] = []
        for _ in range(args.runs):
            for mode, into, cpu_into in (("fresh", fresh, fresh_cpus), ("indexed", colds, cpus)):
                out = subprocess.run(
                    [sys.executable, "-c", SAMPLE, str(ws), mode],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                data = json.loads(out.stdout)
                into.append(data["cold"])
                cpu_into.append(data["cpu"])
                warms.append(data["warm"])
        os.environ["HOME"] = tmp
        snapshot = Catalog(default_locations(ws, home, ws)).refresh()
        skills = snapshot.sorted()
        section = listing(skills)
        per_skill = (count_text(section) - count_text(LISTING_INTRO)) / len(skills)
        budgeted = render(list(snapshot.skills.values()), listing_budget(None))
        help_on = time_help(env, args.runs)
        help_off = time_help({**env, "MYCODE_DISABLE_PLUGINS": "skills"}, args.runs)
    cold = median_ms(colds)
    print(f"skills: {args.skills}, runs: {args.runs}")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"cold start, indexed (every later session): {cold:.1f} ms wall, "
        f"{median_ms(cpus):.1f} ms CPU"
    )
    print(
        f"cold start, fresh (first session, parse all): {median_ms(fresh):.1f} ms wall, "
        f"{median_ms(fresh_cpus):.1f} ms CPU"
    )
    print(
        f"goal: indexed <= {GOAL_MS:.0f} ms "
        "(CPU time is the figure a loaded machine does not inflate)"
    )
    print(f"warm refresh (nothing changed):            {median_ms(warms):.2f} ms")
    print(f"section tokens per listed skill:            {per_skill:.1f}")
    print(
        f"section within the default budget:         {count_text(budgeted.text)} tokens "
        f"({budgeted.full + budgeted.shortened} of {budgeted.total} with a description)"
    )
    print(f"mycode --help: {help_on * 1000:.0f} ms with skills, {help_off * 1000:.0f} ms without")
    print("goal met" if min(cold, median_ms(cpus)) <= GOAL_MS else "GOAL MISSED")


if __name__ == "__main__":
    main()
