"""A check's result kept on disk and reused while nothing it reads has changed.

A result is stored under a key: sha256 over every file of the folders the check reads
(names and bytes), opspec's own source, the installed versions of the packages that
decide verdicts (torch among them) and the facts of the machine and environment that
can change a kernel's answer. Any change is a new key, so a stale result is never
read. The cache lives in ``$OPSPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/opspec``, else
``~/.cache/opspec``; one missing, corrupt or unwritable is passed over without a word:
the check then runs as if there were none.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Iterable

from opspec.spec import atomic, resources

CACHE_ENV = "OPSPEC_CACHE_DIR"
SOURCE = resources.PACKAGE  # opspec's own code, part of every key
# Packages whose version can change a verdict: kernels, drawn inputs, schema checks, YAML parsing.
PACKAGES = ("torch", "hypothesis", "jsonschema", "jsonschema-rs", "referencing", "PyYAML", "numpy")
# Environment variables that steer kernels (CPU capability, threads, devices) or torch itself.
ENVIRONMENT_PREFIXES = ("ATEN_", "CUDA_", "MKL_", "OMP_", "PYTORCH_", "TORCH_")


def folder() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opspec"


def key(inputs: Iterable[Path], facts: Iterable[str]) -> str:
    """sha256 over the files under ``inputs`` (each folder's names and bytes), ``facts``, opspec's source and the
    installed packages and machine."""
    digest = hashlib.sha256()
    for part in [*facts, *_environment()]:
        digest.update(part.encode() + b"\0")
    for root in [*inputs, SOURCE]:
        digest.update(str(root).encode() + b"\0")
        for path in _files(Path(root)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + _file_digest(path) + b"\0")
    return digest.hexdigest()


_read: dict[Path, tuple[tuple[int, int, int], bytes]] = {}  # path -> (its stat when read, digest of its bytes)
RACY_S = 2  # a file changed this recently is read again whatever its stamp says


def _file_digest(path: Path) -> bytes:
    """sha256 of the file's bytes, read again only when its size, change time or inode moved since the last read in
    this process (one validate keys several results over the same source). As git does with its index, a file
    changed in the last RACY_S seconds is always read: a second write within the clock's tick keeps its stamp."""
    status = path.stat()
    stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
    known = _read.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    digest = hashlib.sha256(path.read_bytes()).digest()
    if time.time_ns() - status.st_mtime_ns > RACY_S * 1e9:
        _read[path] = (stamp, digest)
    return digest


def _files(root: Path) -> list[Path]:
    """The files under ``root`` in a stable order, without bytecode and hidden folders (``.git``)."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*") if path.is_file() and not any(
        part == "__pycache__" or part.startswith(".") for part in path.relative_to(root).parts))


def _environment() -> list[str]:
    facts = [sys.version, platform.machine(), platform.node(), str(os.cpu_count()), *_installed()]
    return facts + sorted(f"{name}={value}" for name, value in os.environ.items() if name.startswith(ENVIRONMENT_PREFIXES))


@functools.lru_cache(maxsize=None)  # what is installed does not change under a running process
def _installed() -> tuple[str, ...]:
    found = []
    for package in PACKAGES:
        try:
            found.append(f"{package}=={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} absent")
    return tuple(found)


def _slot(check: str, place: str) -> Path:
    """One file per check and place (a folder checked, with its options): a new result replaces the last one."""
    return folder() / check / f"{hashlib.sha256(place.encode()).hexdigest()[:24]}.json"


def load(check: str, place: str, expected_key: str) -> Any | None:
    """The result stored under ``expected_key``, or None (none stored, another key, unreadable)."""
    try:
        stored = json.loads(_slot(check, place).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored.get("result") if isinstance(stored, dict) and stored.get("key") == expected_key else None


def store(check: str, place: str, stored_key: str, result: Any) -> None:
    """Keep ``result`` under ``stored_key``; a cache that cannot be written is left as it is."""
    try:
        atomic.write_text(_slot(check, place), json.dumps({"key": stored_key, "result": result}))
    except OSError:
        pass
