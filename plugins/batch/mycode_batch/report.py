"""``report.html``: one self-contained page (no scripts, fonts or links to load) with the run's
totals, a row per task and each task's timeline of tool calls, diffs and guidance."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path
from typing import Any

from mycode_batch.outputs import read_patch, task_dir, totals
from mycode_batch.worker import read_events
from mycode_core.api import replace_atomically

CLIP = 2000
PATCH_CLIP = 60_000
TIMELINE_TYPES = (
    "user",
    "assistant",
    "tool_call",
    "permission",
    "tool_result",
    "guidance",
    "retry",
    "notice",
    "compaction",
    "result",
)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fafbfc}
h1{font-size:20px;margin:0 0 12px}h2{font-size:16px;margin:28px 0 8px}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #d0d7de;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f0f3f6}td.num{text-align:right}
.completed{color:#116329;font-weight:600}.failed{color:#a40e26;font-weight:600}
.totals td{font-weight:600}details{background:#fff;border:1px solid #d0d7de;border-radius:6px;
margin:8px 0;padding:6px 10px}summary{cursor:pointer;font-weight:600}
ol.timeline{list-style:none;padding-left:0}ol.timeline li{border-left:3px solid #d0d7de;
margin:6px 0;padding:2px 10px}li.tool_call{border-color:#0969da}li.tool_result{border-color:#8c959f}
li.error{border-color:#cf222e}li.guidance{border-color:#bf8700;background:#fff8c5}
li.assistant{border-color:#8250df}.kind{font-weight:600;margin-right:6px}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:6px;margin:4px 0;
max-height:320px;overflow:auto;font:12px/1.4 ui-monospace,monospace}
.when{color:#57606a;font:12px ui-monospace,monospace;margin-right:8px}
.add{color:#116329}.del{color:#a40e26}.hunk{color:#0550ae}.muted{color:#57606a}
"""


def _clip(text: str, limit: int = CLIP) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more chars)"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content blocks
        return "\n".join(
            str(b.get("text", f"[{b.get('type')}]")) if isinstance(b, dict) else str(b)
            for b in value
        )  # an image is named, never its base64
    return json.dumps(value, ensure_ascii=False, indent=1)


def _diff_html(patch: str) -> str:
    lines = []
    for line in _clip(patch, PATCH_CLIP).splitlines():
        css = ""
        if line.startswith("+") and not line.startswith("+++"):
            css = "add"
        elif line.startswith("-") and not line.startswith("---"):
            css = "del"
        elif line.startswith("@@"):
            css = "hunk"
        lines.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _event_html(event: dict[str, Any], start: float) -> str | None:
    kind = event.get("type")
    if kind not in TIMELINE_TYPES:
        return None
    if kind == "permission":
        if event.get("decision") == "allow":
            return None
        label, css = f"permission · {event.get('name')} · {event.get('decision')}", "error"
        body = str(event.get("reason") or event.get("rule") or "")
    elif kind == "compaction":
        label, css = f"compaction · {event.get('reason') or 'context'}", "guidance"
        body = f"{event.get('before_messages')} → {event.get('after_messages')} messages"
    elif kind == "result":
        label, css = f"result · {event.get('stop_reason')} · {event.get('verdict')}", "assistant"
        body = str(event.get("error") or f"{event.get('steps')} steps")
    elif kind == "user":
        body, css, label = _text(event.get("content", "")), "user", "prompt"
    elif kind == "assistant":
        if not event.get("content"):
            return None
        body, css, label = _text(event["content"]), "assistant", "assistant"
    elif kind == "tool_call":
        label, css = f"tool call · {event.get('name')}", "tool_call"
        body = _text(event.get("arguments"))
    elif kind == "tool_result":
        error = bool(event.get("is_error"))
        label = f"tool result · {event.get('name')}" + (" · error" if error else "")
        css = "tool_result error" if error else "tool_result"
        body = _text(event.get("content", ""))
    elif kind == "guidance":
        label, css = f"guidance · {event.get('source')}", "guidance"
        body = _text(event.get("message", ""))
    elif kind == "retry":
        label, css = f"retry {event.get('attempt')}", "error"
        body = f"{event.get('reason')}: {event.get('message', '')}"
    else:
        if event.get("level") not in ("warning", "error"):
            return None
        label, css, body = f"notice · {event.get('level')}", "error", _text(event.get("message"))
    offset = float(event.get("ts") or start) - start
    return (
        f'<li class="{css}"><span class="when">+{offset:.1f}s</span>'
        f'<span class="kind">{escape(label)}</span><pre>{escape(_clip(body))}</pre></li>'
    )


def _log_tail(path: Path, lines: int = 40) -> str:
    """The last lines of a task's ``log.txt`` (setup output, the run's stderr)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _task_section(record: dict[str, Any], out: Path | None) -> str:
    folder = task_dir(record, out)
    events = read_events(folder / "transcript.jsonl")
    start = float(events[0].get("ts") or 0) if events else 0.0
    items = [html for html in (_event_html(e, start) for e in events) if html]
    patch = read_patch(record, out)
    ok = record.get("stop_reason") == "completed"
    error = record.get("error")
    usage = record.get("usage") or {}
    facts = (
        f"model {record.get('model') or '-'} · verdict {record.get('verdict')} · "
        f"{int(record.get('steps') or 0)} steps · {int(usage.get('input_tokens') or 0):,} in / "
        f"{int(usage.get('output_tokens') or 0):,} out tokens · "
        f"{int(record.get('duration_ms') or 0) / 1000:.1f} s · session {record.get('session_id')}"
    )
    parts = [
        f'<details class="task" id="task-{escape(record["id"])}"{"" if ok else " open"}>',
        f'<summary>{escape(record["id"])} — <span class="{"completed" if ok else "failed"}">'
        f"{escape(str(record.get('stop_reason')))}</span></summary>",
        f'<p class="muted">{escape(facts)}</p>',
    ]
    if error:
        parts.append(f'<p class="failed">{escape(str(error))}</p>')
    if not ok and not any(e.get("type") == "result" for e in events):
        # no run to show (setup failed, no copy, killed): what the setup or run printed
        parts.append(f"<h3>Log</h3><pre>{escape(_log_tail(folder / 'log.txt'))}</pre>")
    parts.append('<h3>Timeline</h3><ol class="timeline">')
    parts.extend(items or ['<li class="muted">no events recorded</li>'])
    parts.append("</ol><h3>Diff</h3>")
    parts.append(_diff_html(patch) if patch else '<p class="muted">no changes</p>')
    parts.append("</details>")
    return "\n".join(parts)


def _row(record: dict[str, Any]) -> str:
    usage = record.get("usage") or {}
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    ok = record.get("stop_reason") == "completed"
    rid = escape(record["id"])
    cells = [
        f'<a href="#task-{rid}">{rid}</a>',
        f'<span class="{"completed" if ok else "failed"}">'
        f"{escape(str(record.get('stop_reason')))}</span>",
        escape(str(record.get("verdict"))),
        f'<td class="num">{int(record.get("steps") or 0)}',
        f'<td class="num">{tokens:,}',
        f'<td class="num">{int(record.get("duration_ms") or 0) / 1000:.1f} s',
    ]
    tds = "".join(c + "</td>" if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
    return f'<tr class="task-row">{tds}</tr>'


def render_report(
    records: list[dict[str, Any]], not_run: list[str], out: Path | None = None
) -> str:
    """The report page for these records (tasks in file order) of the output folder ``out``."""
    total = totals(records)
    rows = "\n".join(_row(r) for r in records)
    sections = "\n".join(_task_section(r, out) for r in records)
    skipped = f"<p>Not run: {escape(', '.join(not_run))}</p>" if not_run else ""
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mycode batch report</title><style>{STYLE}</style></head>
<body>
<h1>mycode batch report</h1>
<p class="muted">generated {generated}</p>
<table id="totals" class="totals"><tr><th>tasks</th><th>completed</th><th>failed</th>
<th>input tokens</th><th>output tokens</th><th>task time</th></tr>
<tr><td class="num">{total["tasks"]}</td><td class="num">{total["completed"]}</td>
<td class="num">{total["failed"]}</td><td class="num">{total["usage"]["input_tokens"]:,}</td>
<td class="num">{total["usage"]["output_tokens"]:,}</td>
<td class="num">{total["duration_ms"] / 1000:.1f} s</td></tr></table>
{skipped}
<h2>Tasks</h2>
<table id="tasks"><tr><th>id</th><th>stop reason</th><th>verdict</th><th>steps</th>
<th>tokens</th><th>time</th></tr>
{rows}
</table>
<h2>Timelines</h2>
{sections}
</body></html>
"""


def write_report(out: Path, records: list[dict[str, Any]], not_run: list[str]) -> Path:
    """Write ``OUT/report.html``."""
    path = out / "report.html"
    page = render_report(records, not_run, out).encode("utf-8")
    replace_atomically(path, page, follow_folder_links=True)
    return path
