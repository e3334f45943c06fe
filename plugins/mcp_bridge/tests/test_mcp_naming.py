"""Tool names: mcp__<server>__<tool>, sanitised, at most 64 characters, stable."""

from __future__ import annotations

import re

from mycode_mcp_bridge.naming import NameAllocator, base_name, sanitize

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_plain_names() -> None:
    assert base_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert base_name("git", "git-status") == "mcp__git__git-status"


def test_sanitise() -> None:
    assert sanitize("my server.v2/tool:x") == "my_server_v2_tool_x"
    assert sanitize("") == "_"
    assert VALID.match(base_name("ünïcødé srv", "tool with spaces"))


def test_long_names_are_cut_with_a_stable_hash() -> None:
    name = base_name("a-very-long-server-name-indeed", "and_an_even_longer_tool_name_" * 3)
    assert VALID.match(name) and len(name) == 64
    assert name == base_name("a-very-long-server-name-indeed", "and_an_even_longer_tool_name_" * 3)
    other = base_name("a-very-long-server-name-indeed", "and_an_even_longer_tool_name_" * 4)
    assert other != name and other[:57] == name[:57]


def test_collisions_resolved_deterministically() -> None:
    pairs = [("my.srv", "x"), ("my_srv", "x"), ("my srv", "x")]
    first = NameAllocator().allocate(pairs)
    second = NameAllocator().allocate(list(reversed(pairs)))
    assert first == second
    names = list(first.values())
    assert len(set(names)) == 3 and all(VALID.match(n) for n in names)
    assert first[("my srv", "x")] == "mcp__my_srv__x"  # sorts first, keeps the plain name


def test_names_taken_elsewhere_are_avoided_and_release_reuses() -> None:
    allocator = NameAllocator(is_taken=lambda n: n == "mcp__s__t")
    name = allocator.name_for("s", "t")
    assert name != "mcp__s__t" and VALID.match(name)
    assert allocator.name_for("s", "t") == name
    allocator.release("s", "t")
    assert allocator.name_for("s", "t") == name
