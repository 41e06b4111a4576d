"""The hardware a case runs on, by name: the GPU's, or the CPU's model.

Reports record it (``device_name``), and expectations can be limited to it
(``hardware:``): a kernel library that picks its code by instruction set gives
other answers on other CPUs.
"""
from __future__ import annotations

import functools
import platform
from pathlib import Path


JOINED = " | "  # between the names of a report merged from parts run on several machines


@functools.cache
def name(device: str) -> str:
    import torch

    if device == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
