"""The run's files: ``results.jsonl`` (crash-safe, appended per task) and ``preds.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mycode_core.api import replace_atomically
from mycode_core.sessions import json_objects


def append_result(path: Path, record: dict[str, Any]) -> None:
    """Append one record as a line, flushed and fsynced; a cut last line is closed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with path.open("ab") as fh:
        if fh.tell() > 0:
            with path.open("rb") as check:
                check.seek(-1, os.SEEK_END)
                if check.read(1) != b"\n":
                    fh.write(b"\n")
        fh.write(line.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def load_results(path: Path) -> dict[str, dict[str, Any]]:
    """The recorded tasks by id (the last line of an id wins; cut or bad lines are skipped)."""
    records: dict[str, dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return records
    for data in json_objects(text.splitlines()):
        if isinstance(data.get("id"), str):
            records[data["id"]] = data
    return records


def drop_bad_lines(path: Path) -> None:
    """Rewrite ``results.jsonl`` without its cut or bad lines (a crash while writing), so the
    file a resumed batch appends to stays valid JSON Lines; untouched when it already is."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    good = [ln for ln in lines if ln.strip() and _is_record(ln)]
    if len(good) != len([ln for ln in lines if ln.strip()]):
        text = "".join(f"{ln}\n" for ln in good)
        replace_atomically(path, text.encode("utf-8"), follow_folder_links=True)


def _is_record(line: str) -> bool:
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("id"), str)


def task_dir(record: dict[str, Any], out: Path | None = None) -> Path:
    """A recorded task's folder: ``OUT/tasks/<id>`` when it is there (the output folder may
    have been moved or copied since), else the folder of the record's ``patch``."""
    if out is not None and (out / "tasks" / str(record.get("id"))).is_dir():
        return out / "tasks" / str(record.get("id"))
    return Path(str(record.get("patch") or "")).parent


def read_patch(record: dict[str, Any], out: Path | None = None) -> str:
    """The diff of a recorded task (empty when it is missing)."""
    try:
        return (task_dir(record, out) / "diff.patch").read_text(encoding="utf-8")
    except OSError:
        return ""


def write_preds(out: Path, records: list[dict[str, Any]], default_model: str | None) -> Path:
    """``preds.json`` in SWE-bench's shape: ``{id: {instance_id, model_name_or_path,
    model_patch}}``, one entry per recorded task."""
    preds = {
        r["id"]: {
            "instance_id": r["id"],
            "model_name_or_path": r.get("model") or default_model or "mycode",
            "model_patch": read_patch(r, out),
        }
        for r in records
    }
    path = out / "preds.json"
    text = json.dumps(preds, indent=2, ensure_ascii=False) + "\n"
    replace_atomically(path, text.encode("utf-8"), follow_folder_links=True)
    return path


def totals(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by outcome and summed usage of a set of records."""
    usage = {"input_tokens": 0, "output_tokens": 0}
    for r in records:
        for key in usage:
            usage[key] += int((r.get("usage") or {}).get(key) or 0)
    completed = sum(1 for r in records if r.get("stop_reason") == "completed")
    return {
        "tasks": len(records),
        "completed": completed,
        "failed": len(records) - completed,
        "usage": usage,
        "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        "duration_ms": sum(int(r.get("duration_ms") or 0) for r in records),
    }
