"""What an eager kernel's error says about the device, not about the drawn call.

Two kinds matter to a verdict:
- a *device fault* (illegal memory access, device-side assert, launch failure): the
  device context is poisoned and every later call in the process fails too, so the
  case is a ``crash`` and the next case needs a fresh process;
- a *missing kernel* (``"dot" not implemented for 'Int'``): the device has no kernel
  for this dtype, so the case is a ``skip`` with that reason, not a failure or an
  unsatisfiable search for valid inputs.
Anything else is the kernel refusing the drawn call: draw another.
"""
from __future__ import annotations

import re

DEVICE_FAULTS = (
    "an illegal memory access was encountered",
    "device-side assert triggered",
    "unspecified launch failure",
    "misaligned address",
    "an illegal instruction was encountered",
    "CUDA error: launch failure",
)
MISSING_KERNEL = re.compile(r"not implemented for '([^']+)'")
# torch's scalar type names, as the dispatch macros print them
SCALAR_TYPE_NAMES = {
    "float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


class DeviceFault(RuntimeError):
    """The device context is poisoned: nothing after this in the process can be trusted."""


def first_line(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else type(err).__name__


def is_device_fault(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, (RuntimeError, DeviceFault)) and any(pattern in text for pattern in DEVICE_FAULTS)


def mentions_device_fault(err: BaseException) -> bool:
    """``err`` or an error it was raised from is a device fault (a wrapper's message may quote it)."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if any(pattern in str(err) for pattern in DEVICE_FAULTS):
            return True
        err = err.__cause__ or err.__context__
    return False


def missing_kernel(err: BaseException, dtype: str) -> str | None:
    """The kernel's own words when ``err`` says it has no implementation for ``dtype``, else None."""
    if not isinstance(err, (NotImplementedError, RuntimeError)):
        return None
    match = MISSING_KERNEL.search(str(err))
    if match and match.group(1) == SCALAR_TYPE_NAMES.get(dtype.removeprefix("torch."), ""):
        return first_line(err)
    return None


def screen(err: BaseException) -> None:
    """Raise DeviceFault when ``err`` is one; otherwise return (the call was refused)."""
    if isinstance(err, DeviceFault):
        raise err
    if is_device_fault(err):
        raise DeviceFault(f"device fault: {type(err).__name__}: {first_line(err)}") from err
