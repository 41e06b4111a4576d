"""Add entries for core-tagged overloads that an opset version does not list yet.

Maintainer script: run it with the torch you are validating against, then fill in
each new entry's category, rationale, equivalents and testing hints by hand (the
validator refuses the ``TODO`` placeholders it leaves). Existing entries are never
rewritten, so curated text is safe.

    python tools/sync_core_ops.py opset/2026.11/core_ops.yaml
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opspec.bridge import torch_ops
from opspec.spec import atomic, yamlio

HEADER = "# yaml-language-server: $schema=../schema/core_ops.schema.json\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--since", help="version stamped on new entries (default: the file's opset)")
    args = parser.parse_args()

    if args.path.exists():
        data = yamlio.load_file(args.path)
    else:
        data = {"opset": args.path.parent.name, "ops": []}
    since = args.since or data["opset"]
    listed = {entry["name"] for entry in data["ops"]}
    added = 0
    for name, schema in torch_ops.core_tagged().items():
        if name in listed:
            continue
        data["ops"].append(
            {
                "name": name,
                "schema": schema,
                "category": "TODO",
                "status": "active",
                "since": since,
                "rationale": "TODO",
            }
        )
        added += 1
    data["ops"].sort(key=lambda entry: entry["name"])
    atomic.write_text(args.path, yamlio.dump(dict(data), HEADER))
    print(f"{args.path}: {added} new entries, {len(data['ops'])} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
