"""Write files so a failure leaves nothing half-written."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def default_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file under the process's umask (mkstemp's files are
    0600 whatever the umask: a report others should read would not be readable)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def scratch_file(target: Path) -> tuple[int, str]:
    """A scratch file beside ``target`` for a rename into place, with the mode a new file gets under the umask."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.fchmod(fd, default_mode())
    return fd, tmp


def write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename; the old file survives any error."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = scratch_file(target)
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
