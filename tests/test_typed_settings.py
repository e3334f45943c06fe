"""SPEC §7 (issue 18 item 4): ``context.settings.section(NAME)`` is the registered model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mycode_core import hookimpl
from mycode_core.config import load_settings
from mycode_core.config_check import settings_tables
from mycode_core.plugins import get_plugin_manager
from mycode_core.testing import make_runner, run_events


class Review(BaseModel):
    reviewers: list[str] = Field(default_factory=lambda: ["ada"])
    strictness: int = Field(default=2, ge=1, le=3)


class ReviewPlugin:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("review", Review)

    @hookimpl
    def session_start(self, source: str, context: Any) -> None:
        self.seen.append(context.settings.section("review"))


def test_an_absent_table_is_the_model_with_its_defaults(tmp_path: Path) -> None:
    plugin = ReviewPlugin()
    run_events(make_runner(tmp_path, plugin, turns=[]))
    (section,) = plugin.seen
    assert isinstance(section, Review)
    assert (section.reviewers, section.strictness) == (["ada"], 2)
    assert section.get("strictness") == 2 and section["reviewers"] == ["ada"]


def test_a_written_table_is_validated_into_the_model(tmp_path: Path) -> None:
    pm = get_plugin_manager(extra_plugins=[ReviewPlugin()], load_entry_points=False)
    workspace = tmp_path / "ws"
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[review]\nstrictness = "3"\n', "utf-8")
    workspace.mkdir()
    settings = load_settings(workspace, home, tables=settings_tables(pm))
    section = settings.section("review")
    assert isinstance(section, Review) and section.strictness == 3
    assert section.reviewers == ["ada"]  # the rest from the defaults
    assert "nope" not in section and section.get("nope", 5) == 5
    assert settings.section("unregistered") == {}
