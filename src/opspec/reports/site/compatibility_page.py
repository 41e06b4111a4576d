"""The Compatibility page: the policy (``opset/compatibility.yaml``), each version's support window,
its golden programs, and the exported-with × loaded-with torch table (``benchmarks/results/golden_matrix.json``).

Nothing here needs torch; a missing or unreadable matrix shows as "not measured yet".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opspec.spec import compatibility, load
from opspec.spec.errors import OpsetError
from opspec.spec.model import VersionInfo, version_key
from opspec.spec.workspace import Workspace

GOLDEN_SCHEMA = "golden_index.schema.json"


def golden_indexes(root: Path) -> dict[str, dict[str, Any]]:
    found = {}
    folder = root / "conformance" / "golden"
    for index in sorted(folder.glob("*/index.yaml")) if folder.is_dir() else ():
        try:
            found[index.parent.name] = load.read_checked(index, GOLDEN_SCHEMA, "golden index")
        except OpsetError:
            continue  # `opspec golden` reports a broken index; the page shows what it can
    return found


def matrix(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("loaded"), dict):
        return None
    exported = sorted(data.get("exported", {}), key=_key)
    loaded = sorted(data["loaded"], key=_key)
    rows, failures = [], []
    for x in exported:
        cells = []
        for y in loaded:
            cell = (data["loaded"][y].get("cells") or {}).get(x)
            if not cell:
                cells.append("not run")
                continue
            n = cell["programs"]
            cells.append(f"{n}/{n} match" if cell["matches"] == n else
                         f"loads {cell['loads']}/{n}, runs {cell['runs']}/{n}, matches {cell['matches']}/{n}")
            failures += [{"exported": x, "loaded": y, **failure} for failure in cell.get("failures", [])]
        rows.append({"exported": x, "cells": cells})
    return {"loaded": loaded, "rows": rows, "failures": failures, "explanations": data.get("explanations", {}),
            "opset": data.get("opset", ""), "measured": data.get("measured", "")}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("+")[0].split(".") if p.isdigit())


def context(ws: Workspace, infos: list[VersionInfo]) -> dict[str, Any]:
    policy, _ = compatibility.read_policy(ws.opset)
    versions = []
    indexes = golden_indexes(ws.root)
    for info in sorted(infos, key=lambda i: version_key(i.version)):
        index = indexes.get(info.version)
        versions.append({
            "version": info.version, "released": info.released or "draft",
            "supported_until": policy.support_ends(info.released) if policy and info.released else "",
            "programs": len(index["programs"]) if index else 0,
            "models": [p["model"] for p in index["programs"] if p["kind"] == "model"] if index else [],
            "covered": len({op for p in index["programs"] if p["kind"] == "ops" for op in p["ops"]}) if index else 0,
            "uncovered": list(index["uncovered"]) if index else [],
            "outside": [(p["model"], p["outside"]) for p in index["programs"] if p.get("outside")] if index else [],
            "torch": index["torch"] if index else "",
        })
    return {"policy": policy, "versions": versions,
            "matrix": matrix(ws.root / "benchmarks" / "results" / "golden_matrix.json")}
