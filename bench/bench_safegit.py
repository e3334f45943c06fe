"""The cost of :mod:`mycode_core.safegit` per git call, against plain git.

Builds (once, under /tmp) a repository of 2,000 files whose config declares a filter and a
diff driver, then times ``git rev-parse --is-inside-work-tree`` and ``git status --porcelain``
run plainly and through :func:`mycode_core.safegit.run` (environment scrub, config parse with
a no-follow read, contained repository resolution, ``-c`` overrides). Report only.

    uv run python bench/bench_safegit.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

from common import median_seconds

from mycode_core import safegit


def build(root: Path) -> Path:
    marker = root / ".built"
    if marker.exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for index in range(2000):
        folder = root / f"pkg{index // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{index}.py").write_text(f"x = {index}\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    with (root / ".git" / "config").open("a") as fh:
        fh.write('[filter "lfs"]\n\tclean = cat\n[diff "pic"]\n\ttextconv = cat\n')
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=b"]
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], cwd=root, check=True)
    marker.write_text("")
    return root


def _time(run: Callable[[], object], repeat: int) -> float:
    return median_seconds(run, repeat) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    root = build(Path("/tmp/mycode-bench-safegit"))
    env = dict(os.environ)
    for label, git_args in (
        ("rev-parse", ["rev-parse", "--is-inside-work-tree"]),
        ("status", ["status", "--porcelain"]),
    ):
        plain = _time(
            partial(
                subprocess.run,
                ["git", *git_args],
                cwd=root,
                env=env,
                capture_output=True,
                check=True,
            ),
            args.repeat,
        )
        safe = _time(partial(safegit.run, git_args, root, root=root), args.repeat)
        prep = _time(
            lambda: (safegit.config_overrides(safegit.find_repository(root)), safegit.safe_env()),
            args.repeat * 10,
        )
        print(
            f"{label:9} plain git {plain:6.2f} ms | safegit {safe:6.2f} ms "
            f"(+{safe - plain:5.2f} ms; resolution + config parse + env alone {prep:5.3f} ms)"
        )


if __name__ == "__main__":
    main()
