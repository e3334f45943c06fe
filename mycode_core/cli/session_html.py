"""A session timeline as one self-contained HTML page (inline CSS, no scripts, no network).

``session_page(timeline)`` returns the page for a :class:`~mycode_core.cli.session_view.Timeline`;
other views can embed :func:`timeline_section` for each of many sessions and wrap them with
:func:`page`.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from mycode_core.cli.richtext import diff_lines, plural
from mycode_core.cli.session_view import Timeline, build_timeline, result_summary, when

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;
color:#1d2330}
main{max-width:980px;margin:0 auto;padding:24px}
h1{font-size:20px;margin:0 0 4px} .meta{color:#5b6475;margin-bottom:20px}
section.turn{background:#fff;border:1px solid #dde1e8;border-radius:8px;margin:16px 0;
padding:12px 16px}
h2{font-size:16px;margin:4px 0 10px} .step{border-left:3px solid #c9d3e6;margin:10px 0;
padding:2px 0 2px 12px}
.step-head{color:#5b6475;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.text{white-space:pre-wrap;margin:6px 0}
.tool{margin:6px 0} .call{font-family:ui-monospace,Menlo,monospace;font-weight:600}
.ok{color:#1a7f37} .err{color:#cf222e} .denied{color:#cf222e;font-weight:600}
pre{font:12px/1.4 ui-monospace,Menlo,monospace;background:#f3f4f6;padding:8px;
border-radius:6px;overflow-x:auto;white-space:pre-wrap;margin:4px 0}
.diff .add{color:#1a7f37} .diff .del{color:#cf222e} .diff .hunk{color:#0969da}
.note{color:#9a6700;margin:4px 0} .result{font-weight:600;margin-top:10px}
.shot{display:block;max-width:100%;border:1px solid #d0d7de;margin:4px 0}
.result.completed{color:#1a7f37} .result.failed{color:#cf222e}
details summary{cursor:pointer;color:#5b6475}
"""


def _diff_html(diff: str) -> str:
    classes = {"green": "add", "red": "del", "cyan": "hunk"}
    rows = [
        f'<span class="{classes.get(style, "ctx")}">{escape(line)}</span>'
        for style, line in diff_lines(diff, shown=200)
    ]
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


def timeline_section(timeline: Timeline) -> str:
    """The body of a session's page (a ``<div>``), without ``<html>`` around it."""
    out = [
        f'<div class="session" id="session-{escape(timeline.session_id)}">',
        f"<h1>Session {escape(timeline.session_id)}</h1>",
        f'<div class="meta">{escape(timeline.model)} · {escape(timeline.cwd)} · started '
        f"{escape(when(timeline.started))} · {plural(len(timeline.turns), 'turn')} · "
        f"{plural(timeline.tokens, 'token')}</div>",
    ]
    for number, turn in enumerate(timeline.turns, 1):
        out.append('<section class="turn">')
        out.append(f"<h2>Task {number}: {escape(turn.prompt)}</h2>")
        for kind, text in turn.notes:
            out.append(f'<div class="note">{escape(kind)}: {escape(text)}</div>')
        for step in turn.steps:
            tokens = f" · {plural(step.tokens, 'token')}" if step.tokens else ""
            out.append('<div class="step">')
            out.append(f'<div class="step-head">Step {step.number}{tokens}</div>')
            if step.text.strip():
                out.append(f'<div class="text">{escape(step.text.strip())}</div>')
            for tool in step.tools:
                state = "ok" if tool.answered and not tool.is_error else "err"
                denied = ' <span class="denied">denied</span>' if tool.decision == "deny" else ""
                out.append('<div class="tool">')
                out.append(f'<div class="call">{escape(tool.summary)}{denied}</div>')
                out.append(f'<div class="{state}">{escape(tool.result_summary)}</div>')
                for url in tool.images:  # base64 of a raster type only (session_view)
                    out.append(f'<img class="shot" src="{url}" alt="image of {escape(tool.name)}">')
                if tool.diff:
                    out.append(_diff_html(tool.diff))
                if tool.result.strip():
                    out.append(
                        "<details><summary>output</summary>"
                        f"<pre>{escape(tool.result[:20000])}</pre></details>"
                    )
                out.append("</div>")
            for kind, text in step.notes:
                out.append(f'<div class="note">↻ {escape(kind)}: {escape(text)}</div>')
            out.append("</div>")
        stop = (turn.result or {}).get("stop_reason")
        state = "completed" if stop == "completed" else "failed"
        out.append(f'<div class="result {state}">{escape(result_summary(turn.result))}</div>')
        error = (turn.result or {}).get("error")
        if error:
            out.append(f'<div class="err">{escape(str(error))}</div>')
        for text in turn.after:
            out.append(f'<div class="note">⟲ {escape(text)}</div>')
        out.append("</section>")
    out.append("</div>")
    return "\n".join(out)


def page(title: str, body: str) -> str:
    """A complete, self-contained HTML document."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


def session_page(timeline: Timeline) -> str:
    """The HTML page of one session."""
    return page(f"mycode session {timeline.session_id}", timeline_section(timeline))


def write_session_page(session_id: str, events: list[Any], target: Path) -> None:
    """Write the session's page to ``target`` atomically (``OSError`` when it cannot be)."""
    from mycode_core.safeopen import replace_atomically

    page_text = session_page(build_timeline(session_id, events))
    replace_atomically(target, page_text.encode("utf-8"), 0o644, create_parents=True)
