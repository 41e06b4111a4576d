"""Paths in what the scripts commit: relative to the repository, never the folders of the machine that wrote them.

A message can quote a file by its absolute path (a special-case row, a traceback); a
result committed with it would name the checkout, the home folder or the venv of
whoever ran the script. These helpers rewrite such paths where a committed file is
written: below the checkout, relative to it; in an installed package, from the
package on (``torch/nn/modules/linear.py``); in the home folder, from ``~``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from opspec.spec import resources

# a site-packages (or dist-packages) folder wherever the venv is: what follows it is the package's own path
_INSTALLED = re.compile(r"(?:/[^/\s\"':]+)+/(?:site|dist)-packages/")


def portable_text(text: str, root: Path | None = None) -> str:
    """``text`` with the checkout's, the installed packages' and the home folder's absolute paths made neutral."""
    root = Path(root or resources.CHECKOUT)
    text = _INSTALLED.sub("", text)  # first: a venv may sit inside the checkout
    text = text.replace(f"{root}{os.sep}", "")
    home = str(Path.home())
    if home not in ("", os.sep):  # a root-less home ("/") would turn every path into ~
        text = text.replace(f"{home}{os.sep}", f"~{os.sep}")
    return text


def portable_data(data: Any, root: Path | None = None) -> Any:
    """JSON-like ``data`` with every string (keys too) made portable by :func:`portable_text`."""
    if isinstance(data, str):
        return portable_text(data, root)
    if isinstance(data, dict):
        return {portable_data(key, root): portable_data(value, root) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [portable_data(value, root) for value in data]
    return data


def portable_json(data: Any, root: Path | None = None, **dump_options: Any) -> str:
    """``json.dumps`` of the portable form of ``data``, with a final newline (how the results are committed)."""
    return json.dumps(portable_data(data, root), **dump_options) + "\n"
