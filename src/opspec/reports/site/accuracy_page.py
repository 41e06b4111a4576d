"""The accuracy page: per op and dtype the contract, eager CPU's histogram of errors and each backend's largest.

Built from committed data only: the contracts (``opset/accuracy.yaml``) and the tables ``opspec accuracy
--backend NAME --report conformance/accuracy/NAME-DEVICE.json`` wrote. A table's file name says its backend and
device; ``eager-cpu.json`` gives the histogram, and ``torch-versions/eager-cpu.json`` eager's largest errors on other
torch versions (its history). Like functional_algorithms' results table, one row per op and dtype, errors counted
in buckets of ULPs.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from opspec.spec.accuracy import MAY_FLUSH, Contracts

BUCKETS = ("0", "0.5", "1", "2", "4")  # a bucket counts the errors above the one before, up to its own bound
REFERENCE = "eager-cpu"
HISTORY = "torch-versions"  # the reference's largest errors on other torch versions


def read_tables(folder: Path) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """table name (backend-device) -> (op, dtype) -> its measurement; unreadable files are left out."""
    tables = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tables[path.stem] = {(r["op"], r["dtype"]): r for r in data["results"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return tables


def read_history(folder: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """The largest errors measured on other torch versions (``torch-versions/NAME.json``: per torch, "op dtype" ->
    max ULP), as tables named ``NAME torch V`` beside the others, and their metadata; unreadable files left out."""
    tables, meta = {}, {}
    for path in sorted((folder / HISTORY).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            for version, found in data["torch"].items():
                name = f"{path.stem} torch {version}"
                tables[name] = {tuple(key.rsplit(" ", 1)): {"max_ulp": ulp} for key, ulp in found["largest_error"].items()}
                meta[name] = {"torch": version, "device": data.get("device"), "backend": data.get("backend"),
                              "seed": 0, "samples": "the same"}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return tables, meta


def _ulp(value: Any) -> str:
    number = float(value)  # rounded up, so a result a little off correct rounding never reads as 0.5
    return "inf" if math.isinf(number) else f"{math.ceil(round(number * 10_000, 6)) / 10_000:g}"


def _buckets(histogram: dict[str, int]) -> list[str]:
    """Counts per bucket of BUCKETS, and one more for everything above the last (NaN and infinity mismatches too)."""
    counts = [histogram.get(bucket, 0) for bucket in BUCKETS]
    above = sum(count for bucket, count in histogram.items() if bucket not in BUCKETS)
    return [f"{count:,}" if count else "" for count in counts + [above]]


def context(contracts: Contracts, tables: dict[str, dict], op_link) -> dict[str, Any]:
    history = sorted((name for name in tables if name.startswith(f"{REFERENCE} torch ")),
                     key=lambda name: tuple(int(p) for p in name.rsplit(" ", 1)[1].split(".") if p.isdigit()))
    names = [REFERENCE] + history + sorted(name for name in tables if name != REFERENCE and name not in history)
    rows = []
    for contract in contracts.ulp:
        key = (contract.op, contract.dtype)
        reference = tables.get(REFERENCE, {}).get(key)
        flush = MAY_FLUSH in (contract.subnormals.inputs, contract.subnormals.results)
        cells = []
        for name in names:
            found = tables.get(name, {}).get(key)
            if found is None:
                cells.append("")
            elif "max_ulp" not in found:
                cells.append("failed")
            else:
                mark = "" if float(found["max_ulp"]) <= contract.max_ulp else " **broken**"
                who = found.get("executed")  # a backend's table: who computed it, where not its target
                cells.append(_ulp(found["max_ulp"]) + mark + (f" ({who})" if who not in (None, "target") else ""))
        rows.append({
            "op": contract.op, "link": op_link(contract.op), "dtype": contract.dtype,
            "contract": f"{contract.max_ulp:g}" + (" flush" if flush else "") + (" *" if contract.own_domain else ""),
            "inputs": (f"{reference['inputs']:,}" + (" (all)" if reference.get("exhaustive") else ""))
            if reference and "inputs" in reference else "",
            "buckets": _buckets(reference["histogram"]) if reference and "histogram" in reference else [""] * 6,
            "backends": cells,
        })
    models = [{"op": m.op, "link": op_link(m.op), "dtypes": ", ".join(m.dtypes), "bound": m.bound}
              for m in contracts.error_models]
    boolean = [{"op": n.op, "link": op_link(n.op)} for n in contracts.boolean]
    torch = sorted({str(r.get("torch", "")) for table in tables.values() for r in table.values() if r.get("torch")})
    policy = [{"dtype": dtype, "inputs": contracts.policy_of(dtype).inputs, "results": contracts.policy_of(dtype).results,
               "reason": contracts.policy_of(dtype).reason or "not named by the policy: subnormals are kept"}
              for dtype in ("float64", "float32", "float16", "bfloat16")]
    return {"rows": rows, "backends": names, "buckets": BUCKETS, "models": models, "boolean": boolean,
            "torch": torch, "policy": policy}


def pages(env, opset_root: Path, tables_folder: Path, contracts: Contracts, slugs: dict[str, str]) -> dict[str, str]:
    tables = read_tables(tables_folder)
    meta = {}
    for path in sorted(tables_folder.glob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
            meta[path.stem] = {k: head.get(k) for k in ("torch", "device", "backend", "seed", "samples")}
        except (OSError, ValueError):
            continue
    older, older_meta = read_history(tables_folder)
    tables.update(older)
    meta.update(older_meta)
    found = context(contracts, tables, lambda op: f"ops/{slugs[op]}.md" if op in slugs else None)
    return {"accuracy.md": env.get_template("accuracy.md.j2").render(meta=meta, table=table(found), **found)}


def table(found: dict[str, Any]) -> str:
    """The Markdown table, one line per op and dtype."""
    head = ["op", "dtype", "contract", "inputs", "exact", *(f"≤{b}" for b in found["buckets"][1:]), "more",
            *found["backends"]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 4 + "---:|" * (len(head) - 4)]
    for row in found["rows"]:
        op = f"[`{row['op']}`]({row['link']})" if row["link"] else f"`{row['op']}`"
        lines.append("| " + " | ".join([op, row["dtype"], row["contract"], row["inputs"], *row["buckets"],
                                        *row["backends"]]) + " |")
    return "\n".join(lines)
