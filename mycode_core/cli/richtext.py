"""Pieces of the text view: streamed markdown, compact diffs, the telling line of a result.

* :class:`MarkdownStream` prints the assistant's words as rich Markdown one finished block at
  a time (a block ends at a blank line outside a code fence), so answers stream and still come
  out rendered and wrapped at word boundaries; the block being written is drawn live until it
  ends.
* :func:`diff_lines` turns a unified diff into a few coloured lines, collapsed past a limit.
* :func:`result_line` picks the line of a tool result a reviewer wants: for a failed command,
  its error line rather than its last line.
"""

from __future__ import annotations

import json
import re
from typing import Any

DIFF_SHOWN = 10
"""Diff lines shown under an edit before the rest is collapsed."""
DIFF_LINE_CHARS = 200
"""A diff line longer than this is cut in the terminal view (a 1 MB one-line write)."""
_ERROR_LINE = re.compile(
    r"(error|exception|traceback|failed|failure|fatal|denied|not found|no such file|"
    r"cannot|can't|unable to|assert|panic|segmentation fault|\bE\s)",
    re.IGNORECASE,
)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 step``, ``2 steps`` (``many`` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def content_text(content: Any) -> str:
    """A tool result as text to show: its text blocks, ``[image]`` (the block's type) for any
    other block — never an image's base64."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", f"[{block.get('type', 'block')}]"))
            for block in content
            if isinstance(block, dict)
        )
    return json.dumps(content, ensure_ascii=False)


_ELIDED = re.compile(r"^… \[(\d+) lines \(\d+ bytes\) elided; full output: ", re.MULTILINE)
"""The marker ``run_command`` puts in place of the middle of a long output."""
_TAG = re.compile(r"<[^<>]{0,200}>")
RETRY_MESSAGE_CHARS = 160


def line_count(text: str) -> int:
    """How many lines a tool result holds — for a command's output cut to its head and tail,
    the lines printed: those shown, its marker's line counted as the lines it stands for
    (``… [195636 lines (1263903 bytes) elided; full output: …``)."""
    if not text:
        return 0
    lines = text.count("\n") + 1
    marker = _ELIDED.search(text)
    return lines if marker is None else lines - 1 + int(marker.group(1))


def retry_text(attempt: Any, delay: Any, reason: Any, message: Any) -> str:
    """``retry 1 in 1.1s: server_error — HTTP 502: Bad Gateway``: the server's words on one
    line (markup tags of an HTML error page dropped), shortened."""
    seconds = f"{delay:.1f}" if isinstance(delay, int | float) else str(delay)
    said = " ".join(_TAG.sub(" ", str(message or "")).split())
    if len(said) > RETRY_MESSAGE_CHARS:
        said = said[: RETRY_MESSAGE_CHARS - 1] + "…"
    line = f"retry {attempt} in {seconds}s: {reason}"
    return f"{line} — {said}" if said and said != str(reason) else line


def result_line(text: str, metadata: dict[str, Any]) -> str:
    """The most telling line of a tool result: the first; for a command, the last line, or
    when it failed the last line that looks like an error; the exit code when non-zero; for a
    failed subagent, why it failed."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    child = metadata.get("subagent")
    if isinstance(child, dict) and child.get("error"):
        why = " ".join(str(child["error"]).split())
        return f"subagent {child.get('agent_id')} {child.get('stop_reason')}: {why}"
    if "exit_code" not in metadata:
        return lines[0]
    body = [
        line
        for line in lines
        if not line.startswith(("exit code:", "Interrupted by the user", "Command timed out"))
    ]
    code = metadata["exit_code"]
    if metadata.get("interrupted"):
        return "interrupted (the command was stopped)"
    if metadata.get("timed_out"):
        return f"timed out{': ' + body[-1].strip() if body else ''}"
    if not body:
        return "(no output)" + (f"  (exit {code})" if code else "")
    chosen = body[-1]
    if code:
        errors = [line for line in body if _ERROR_LINE.search(line)]
        if errors:
            chosen = errors[-1]
    return f"{chosen.strip()}  (exit {code})" if code else chosen.strip()


def diff_lines(diff: str, shown: int = DIFF_SHOWN) -> list[tuple[str, str]]:
    """``(style, text)`` lines of a unified diff without its file headers, at most ``shown``
    of them and then a "… N more lines" line; each line at most ``DIFF_LINE_CHARS``
    characters, then "… N more characters" (the stream-json events keep the whole diff)."""
    body = [
        line
        for line in diff.splitlines()
        if not line.startswith(("--- ", "+++ ")) and line.strip() != ""
    ]
    out: list[tuple[str, str]] = []
    for line in body[:shown]:
        if line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("…"):
            style = "dim"
        else:
            style = "dim"
        if len(line) > DIFF_LINE_CHARS:
            more = len(line) - DIFF_LINE_CHARS
            line = f"{line[:DIFF_LINE_CHARS]} … {plural(more, 'more character')}"
        out.append((style, line))
    if len(body) > shown:
        out.append(("dim", f"… {plural(len(body) - shown, 'more line')}"))
    return out


class MarkdownStream:
    """Collects streamed text and prints each finished markdown block with rich; the block
    still being written shows meanwhile below, in a live region the finished block replaces
    (a slow model's long paragraph is seen as it comes)."""

    PREVIEW_CHARS = 4_000
    """At most this much of the unfinished block is drawn (its tail, cropped to the screen)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.buffer = ""
        self.active = False
        self.blocks = 0
        self.live: Any = None

    def feed(self, text: str) -> None:
        """Add streamed text; print the blocks it completes, preview the one it starts."""
        self.active = True
        self.buffer += text
        cut = self._last_block_end()
        if cut > 0:
            self.hide()
            self._print(self.buffer[:cut])
            self.buffer = self.buffer[cut:]
        self._preview()

    def _preview(self) -> None:
        # started once per block (a finished block hides it); then redrawn ten times a second
        # from the buffer as it grows, so a chunk costs nothing that grows with the block
        if self.live is None and self.buffer.strip("\n"):
            from rich.live import Live

            self.live = Live(
                _Unfinished(self), console=self.console, transient=True, refresh_per_second=10
            )
            self.live.start()

    def hide(self) -> None:
        """Take the preview of the unfinished block off the screen (the text stays buffered)."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _last_block_end(self) -> int:
        """Offset just after the last blank line that is outside a code fence, or 0."""
        end = 0
        in_fence = False
        offset = 0
        for line in self.buffer.splitlines(keepends=True):
            offset += len(line)
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not stripped and not in_fence and line.endswith("\n"):
                end = offset
        return end

    def _print(self, text: str) -> None:
        from rich.markdown import Markdown

        if text.strip():
            if self.blocks:
                self.console.print()
            self.console.print(Markdown(text.strip("\n")))
            self.blocks += 1

    def flush(self) -> None:
        """Print what is left (the end of the answer)."""
        self.hide()
        if self.buffer.strip():
            self._print(self.buffer)
        self.buffer = ""
        self.active = False
        self.blocks = 0


class _Unfinished:
    """The block a :class:`MarkdownStream` is still receiving, rendered as markdown; only its
    last rows, so the newest words stay on the screen however long the paragraph."""

    def __init__(self, stream: MarkdownStream) -> None:
        self.stream = stream

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.markdown import Markdown
        from rich.segment import Segment

        text = self.stream.buffer.strip("\n")[-MarkdownStream.PREVIEW_CHARS :]
        if not text:
            return
        lines = console.render_lines(Markdown(text), options.update(height=None), pad=False)
        for line in lines[-max(1, console.height - 2) :]:
            yield from line
            yield Segment.line()


GLYPHS = str.maketrans(
    {"●": "*", "✗": "x", "⎿": "=", "↻": "~", "·": "-", "→": "->", "…": "...", "›": ">", "—": "-"}
)


class EncodingSafeFile:
    """A text stream that cannot fail on characters its encoding lacks (a non-UTF-8 locale):
    the view's symbols become ASCII, anything else unencodable becomes ``?``."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "ascii"

    def write(self, text: str) -> int:
        """Write ``text`` after making it encodable."""
        safe = text.translate(GLYPHS).encode(self.encoding, "replace").decode(self.encoding)
        return int(self.stream.write(safe) or 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def safe_stream(stream: Any) -> Any:
    """``stream`` itself when it speaks UTF-8, else an :class:`EncodingSafeFile` around it."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return stream if encoding.startswith("utf") else EncodingSafeFile(stream)
