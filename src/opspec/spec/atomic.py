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
    """Let ``writer(tmp_path)`` write the file beside ``path``, then rename it into place; on any error nothing is left."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the temporary name keeps the suffix: some writers (torch.export.save) insist on it
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.tmp.", suffix=target.suffix)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # an ordinary file, not mkstemp's private one
        writer(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
