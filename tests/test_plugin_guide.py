"""The README's plugin guide is executed: every plugin and test snippet is written out and the
snippet tests are run by a real pytest subprocess with mycode's pytest fixtures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _guide_files() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    end = text.index("The hooks (`mycode_core/hookspecs.py`)")
    guide = text[text.index("## Plugin guide") : end]
    files: dict[str, str] = {}
    for block in re.findall(r"```python\n(.*?)```", guide, re.S):
        first = block.splitlines()[0]
        match = re.match(r"# (\w+\.py)$", first)
        assert match, f"every guide snippet starts with '# name.py': {first!r}"
        files[match.group(1)] = block
    return files


def test_the_guide_has_every_kind_of_plugin() -> None:
    names = set(_guide_files())
    for plugin in ("word_count", "todo_file", "changelog_policy", "echo_model"):
        assert f"{plugin}.py" in names and f"test_{plugin}.py" in names
    assert {"house_rules.py", "tool_log.py"} <= names


def test_a_minimal_tool_plugin_is_at_most_seven_lines() -> None:
    source = _guide_files()["word_count.py"]
    code = [line for line in source.splitlines()[1:] if line.strip()]
    assert len(code) <= 7, code


def test_every_guide_snippet_runs(tmp_path: Path) -> None:
    for name, source in _guide_files().items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "MYCODE_HOME": str(tmp_path / "h")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    expected = sum(source.count("\ndef test_") for source in _guide_files().values())
    assert f"{expected} passed" in done.stdout, done.stdout


def _uv() -> str | None:
    """A ``uv`` to build with: ``$UV`` (set by ``uv run``), on PATH, or the ``uv`` package."""
    import shutil

    beside = Path(sys.executable).with_name("uv")
    found = os.environ.get("UV") or shutil.which("uv") or (str(beside) if beside.exists() else "")
    if found:
        return found
    try:
        import uv  # type: ignore[import-not-found]
    except ImportError:
        return None
    return str(uv.find_uv_bin())


def test_the_guide_pyproject_builds_as_printed(tmp_path: Path) -> None:
    import zipfile

    import pytest

    uv = _uv()
    if uv is None:
        pytest.skip("no uv to build with (set UV=/path/to/uv)")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(# pyproject.toml of your package\n.*?)```", text, re.S)
    assert block, "the guide prints a pyproject.toml"
    (tmp_path / "pyproject.toml").write_text(block.group(1), encoding="utf-8")
    (tmp_path / "word_count.py").write_text(_guide_files()["word_count.py"], encoding="utf-8")
    done = subprocess.run(
        [uv, "build", "--offline", "--wheel", "--out-dir", str(tmp_path / "dist")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "[mycode]\nword_count = word_count" in archive.read(entry_points).decode()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert "word_count.py" in names
    assert b"Version: 0.1.0" in metadata and b"Requires-Dist: mycode-core" in metadata
