"""Issue 20 items 3–4: ``@path`` inlines a workspace file (bounded) and attaches an image for a
model that takes images; every bad input is one notice line. Checked on what the fake
OpenAI server actually receives."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from mycode_core.cli import mentions
from mycode_core.testing import FakeOpenAIServer, run_cli, turn
from mycode_core.tokens import count_message

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _run(tmp_path: Path, prompt: str, model: str = "m", config: str = "") -> tuple[Any, Any]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config)
    with FakeOpenAIServer([turn("ok")]) as server:
        done = run_cli(
            [*server.cli_args(prompt, model=model)],
            tmp_path / "ws",
            home,
            {"MYCODE_LOAD_PLUGINS": ""},
        )
        assert done.rc == 0, done.stderr
        assert "Traceback" not in done.stderr
        user = [m for m in server.chat_requests[0].messages if m["role"] == "user"][-1]
    return user["content"], done


@pytest.fixture(autouse=True)
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n")
    return ws


def test_a_mentioned_file_is_inlined(tmp_path: Path) -> None:
    content, done = _run(tmp_path, "what does @src/app.py return?")
    assert isinstance(content, str)
    assert content.startswith("what does @src/app.py return?")
    assert '<mentioned-file path="src/app.py">\ndef main():\n    return 42\n' in content
    assert "read it with read_file" not in content


def test_a_long_file_is_cut_and_the_user_is_told(tmp_path: Path, workspace: Path) -> None:
    (workspace / "big.log").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    content, done = _run(tmp_path, "see @big.log")
    assert "line 2000\n" in content and "line 2001\n" not in content
    assert "cut here" in content
    assert "inlined the first 2,000 lines" in done.stderr


def test_a_huge_line_file_is_cut_at_100_kb(tmp_path: Path, workspace: Path) -> None:
    (workspace / "wide.txt").write_text(("x" * 999 + "\n") * 300)
    content, done = _run(tmp_path, "see @wide.txt")
    assert len(content) < mentions.MAX_BYTES + 2000
    assert "100 KB at most" in done.stderr


def test_binary_outside_and_missing_mentions(tmp_path: Path, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\0\1\2" * 100)
    (tmp_path / "secret.txt").write_text("outside")
    content, done = _run(tmp_path, "look at @blob.bin and @../secret.txt and @someone")
    assert "blob.bin is a binary file" in done.stderr
    assert "outside the workspace" in done.stderr and "outside" not in content.split("\n\n")[-1]
    assert "@someone" in content and "mentioned-file" not in content


def test_an_import_alias_is_no_mention_of_a_file_outside(tmp_path: Path) -> None:
    """TypeScript's ``@/`` import aliases (``from '@/hooks/useA11y'``, ``"@/*": ["./src/*"]``)
    in a plugin's command or a pasted snippet: each was refused as a path outside the
    workspace, one notice apiece; a path that does not exist is text, outside too."""
    prompt = "use `import { useA11y } from '@/hooks/useA11y'` and \"@/*\" in @src/app.py"
    content, done = _run(tmp_path, prompt)
    assert "outside the workspace" not in done.stderr, done.stderr
    assert "@/hooks/useA11y" in content and '<mentioned-file path="src/app.py">' in content


def test_an_image_is_attached_for_a_model_that_takes_images(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    content, done = _run(tmp_path, "what is in @shot.png?", model="gpt-4o")
    assert isinstance(content, list)
    assert content[0]["type"] == "text" and "[image attached: shot.png]" in content[0]["text"]
    url = content[1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    "config", ["images = true\n", '[models."m"]\nimages = true\n'], ids=["images", "models"]
)
def test_config_says_the_model_takes_images(tmp_path: Path, workspace: Path, config: str) -> None:
    (workspace / "a.gif").write_bytes(b"GIF89a" + b"\0" * 20)
    content, _done = _run(tmp_path, "@a.gif", config=config)
    assert isinstance(content, list) and content[1]["image_url"]["url"].startswith(
        "data:image/gif;base64,"
    )


def test_an_image_for_a_text_model_is_one_clear_line(tmp_path: Path, workspace: Path) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    content, done = _run(tmp_path, "what is in @shot.png?")
    assert isinstance(content, str) and "base64" not in content
    lines = [line for line in done.stderr.splitlines() if "shot.png" in line]
    assert len(lines) == 1 and "does not take images" in lines[0]


def test_a_screenshot_counts_as_an_image_not_as_its_bytes(tmp_path: Path, workspace: Path) -> None:
    """A screenshot is megabytes of base64 but about a thousand tokens to a model that takes
    images: it is sent in the first request, not compacted away or refused as an overflow."""
    (workspace / "shot.png").write_bytes(PNG[:16] + os.urandom(3 * 1024 * 1024))
    content, _done = _run(tmp_path, "what is in @shot.png?", model="gpt-4o")
    assert isinstance(content, list) and content[1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    image = {"role": "user", "content": content}
    assert count_message(image) < count_message({"role": "user", "content": "x"}) + 2_000


def test_not_an_image_and_too_large(tmp_path: Path, workspace: Path) -> None:
    (workspace / "fake.png").write_text("I am text")
    with (workspace / "huge.webp").open("wb") as fh:
        fh.write(b"RIFF\0\0\0\0WEBP")
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    content, done = _run(tmp_path, "@fake.png @huge.webp", model="gpt-4o")
    assert isinstance(content, str)
    assert "@fake.png is not a PNG, JPEG, GIF or WebP image" in done.stderr
    assert "@huge.webp is 50 MB, over the 20 MB image limit" in done.stderr


def test_image_type_by_bytes() -> None:
    assert mentions.image_type(PNG[:16]) == "image/png"
    assert mentions.image_type(b"\xff\xd8\xff\xe0" + b"\0" * 12) == "image/jpeg"
    assert mentions.image_type(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert mentions.image_type(b"%PDF-1.7") is None


def test_an_attached_image_is_kept_for_resume_and_sessions_show(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (workspace / "shot.png").write_bytes(PNG)
    with FakeOpenAIServer([turn("a red dot"), turn("still a red dot")]) as server:
        first = run_cli([*server.cli_args("what is in @shot.png?", model="gpt-4o"),
                         "--output-format", "json"], workspace, home,
                        {"MYCODE_LOAD_PLUGINS": ""})  # fmt: skip
        assert first.rc == 0, first.stderr
        (workspace / "shot.png").unlink()  # the saved copy is what a resumed session sends
        session = first.events[-1]["session_id"]
        again = run_cli([*server.cli_args("and now?", model="gpt-4o"), "--resume", session],
                        workspace, home, {"MYCODE_LOAD_PLUGINS": ""})  # fmt: skip
        assert again.rc == 0, again.stderr
        resumed = server.chat_requests[-1].messages
    first_prompt = [m for m in resumed if m["role"] == "user"][0]["content"]
    assert (
        isinstance(first_prompt, list) and "[image attached: shot.png]" in first_prompt[0]["text"]
    )
    assert first_prompt[1]["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(PNG).decode()
    )
    saved = list((home / "artifacts" / session / "images").iterdir())
    assert [p.read_bytes() for p in saved] == [PNG]
    assert sorted(p.name for p in workspace.iterdir()) == ["src"]  # nothing of ours there
    shown = run_cli(["sessions", "show", session], workspace, home, {"MYCODE_LOAD_PLUGINS": ""})
    assert "image: shot.png (saved:" in shown.stdout
    assert str(saved[0]) in "".join(shown.stdout.split())  # a long path may wrap
    saved[0].unlink()  # the copy is gone: the resumed prompt says so instead of failing
    with FakeOpenAIServer([turn("no image")]) as server:
        third = run_cli([*server.cli_args("again", model="gpt-4o"), "--resume", session],
                        workspace, home, {"MYCODE_LOAD_PLUGINS": ""})  # fmt: skip
        assert third.rc == 0, third.stderr
        text = [m for m in server.chat_requests[-1].messages if m["role"] == "user"][0]["content"]
    assert isinstance(text, str) and "[image shot.png: its saved copy is gone]" in text


def _edit_after_mention(tmp_path: Path, prompt: str) -> dict[str, Any]:
    """The ``tool_result`` of an ``edit_file`` of ``src/app.py`` made straight after ``prompt``,
    with no ``read_file`` first."""
    pytest.importorskip("mycode_builtin_tools")
    edit = {"path": "src/app.py", "old_string": "return 42", "new_string": "return 43"}
    call = {"id": "e1", "name": "edit_file", "arguments": edit}
    with FakeOpenAIServer([turn(tool_calls=[call]), turn("edited")]) as server:
        done = run_cli(
            [
                *server.cli_args(prompt, output_format="stream-json"),
                "--permission-mode",
                "accept-edits",
            ],
            tmp_path / "ws",
            tmp_path / "home",
            {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
        )
    assert done.rc == 0, done.stderr
    (result,) = [e for e in done.events if e["type"] == "tool_result"]
    return result


def test_a_file_the_user_mentioned_whole_counts_as_read(tmp_path: Path, workspace: Path) -> None:
    result = _edit_after_mention(tmp_path, "make @src/app.py return 43")
    assert not result["is_error"], result["content"]
    assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 43\n"


def test_a_file_mentioned_only_in_part_must_still_be_read(tmp_path: Path, workspace: Path) -> None:
    (workspace / "src" / "app.py").write_text(
        "def main():\n    return 42\n" + "".join(f"# {n}\n" for n in range(3000))
    )
    result = _edit_after_mention(tmp_path, "make @src/app.py return 43")
    assert result["is_error"] and "has not been read" in result["content"]


def test_a_mention_of_another_file_is_no_read_of_this_one(tmp_path: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("see src/app.py\n")
    result = _edit_after_mention(tmp_path, "do what @notes.txt says")
    assert result["is_error"] and "has not been read" in result["content"]


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("gpt-4o", True),
        ("openai:gpt-4.1-mini", True),
        ("openai/gpt-4o", True),  # OpenRouter names a model after its maker
        ("mistralai/pixtral-12b", True),
        ("anthropic/claude-sonnet-4.5", True),
        ("qwen2.5-vl:7b", True),  # an Ollama tag
        ("qwen2.5-coder:32b", False),
        ("deepseek/deepseek-chat", False),
    ],
)
def test_which_models_take_images(model: str, takes: bool) -> None:
    from mycode_core.config import Settings
    from mycode_core.pricing import accepts_images

    assert accepts_images(Settings(model=model)) is takes
    assert accepts_images(Settings(model=model, images=True))
    entry = {model: {"images": not takes}}
    assert accepts_images(Settings(model=model, models=entry)) is not takes
