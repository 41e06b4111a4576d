"""Where the opset data lives: inside the installed wheel, or in the source checkout."""
from __future__ import annotations

import functools
from pathlib import Path


@functools.lru_cache(maxsize=None)
def opset_root() -> Path:
    """The directory holding ``versions.yaml``, one folder per version, and ``schema/``.

    A wheel carries it as the ``opspec._opset`` package; an editable install or a
    plain checkout reads the repository's ``opset/`` folder directly.
    """
    packaged = Path(__file__).parent / "_opset"
    if (packaged / "versions.yaml").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "opset"
    if (checkout / "versions.yaml").is_file():
        return checkout
    raise FileNotFoundError("opspec's opset data is missing from this installation")


def schema_dir() -> Path:
    return opset_root() / "schema"
