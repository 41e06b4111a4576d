"""Write files so a failure leaves nothing half-written."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename; the old file survives any error."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_with(path: Path | str, writer) -> None:
    """Let ``writer(tmp_path)`` write the file in a scratch folder beside ``path``, under ``path``'s own name
    (some writers record it: torch.export.save names the archive's folder after it), then rename it into place;
    on any error nothing is left."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        writer(scratch / target.name)
        os.replace(scratch / target.name, target)
    finally:
        for leftover in scratch.iterdir():
            leftover.unlink()
        scratch.rmdir()
