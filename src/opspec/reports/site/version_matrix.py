"""The torch version matrix page: ``benchmarks/results/version_matrix.json`` as one row per torch.

The file is written by ``benchmarks/version_matrix.py``; anything missing or not
understood shows as "not run" rather than failing the build.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STEPS = ("wheel", "validate", "special_cases", "drift", "decompositions", "inductor")


def read(path: Path) -> list[dict[str, Any]]:
    """One row per torch version, oldest first: each step's verdict and one-line summary, and its details."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        versions = data["versions"]
        assert isinstance(versions, dict)
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        return []
    rows = []
    for version, entry in sorted(versions.items(), key=lambda item: _key(item[0])):
        if not isinstance(entry, dict):
            continue
        steps = {step: _step(entry.get(step)) for step in STEPS}
        details = []
        for note in (entry.get("validate") or {}).get("notes", []):
            details.append(f"validate: {note}")
        for finding in (entry.get("special_cases") or {}).get("findings", []):
            details.append(f"special cases: {finding}")
        for rule in (entry.get("drift") or {}).get("drifted_rules", []):
            details.append(f"drift: {rule.get('op')}: {rule.get('problem')}")
        for failure in (entry.get("decompositions") or {}).get("failures", []):
            details.append(f"decomposition suite: {failure.get('test')}: {failure.get('message')}")
        for case in (entry.get("inductor") or {}).get("not_passing", []):
            details.append(f"inductor: {case.get('op')} {case.get('dtype')}: {case.get('status')}: {case.get('message')}")
        device = entry.get("device", "cpu")  # a GPU leg: its device and card beside the torch
        torch = str(entry.get("torch", version)) + ("" if device == "cpu" else f" on {device} ({entry.get('device_name', 'GPU')})")
        details += [f"{step}: {entry[step]['note']}" for step in STEPS if isinstance(entry.get(step), dict) and entry[step].get("note")]
        rows.append({"torch": torch, "measured": str(entry.get("measured", "")),
                     "minutes": round(entry["total_s"] / 60) if isinstance(entry.get("total_s"), (int, float)) else None,
                     "steps": steps, "details": details})
    return rows


def _step(data: Any) -> dict[str, str]:
    if not isinstance(data, dict):
        return {"text": "not run"}
    return {"text": ("ok: " if data.get("ok") else "differs: ") + str(data.get("summary", ""))}


def _key(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))
