"""The ``opspec`` command: one subcommand module each, registered in COMMANDS.

Each module exposes ``add_parser(subparsers)`` which registers its subcommand and
sets ``func`` (``args -> exit code``). Exit codes: 0 clean, 1 findings or
failures, 2 unusable input or bad usage. Errors the user can fix are printed as
one line on stderr, never as a traceback. Path arguments declare their kind
(``cli.pathargs``) and are checked here, before the subcommand does any work.
"""
from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
from typing import NoReturn

from opspec.cli import pathargs
from opspec.spec import workspace
from opspec.spec.errors import OpsetError
from opspec.spec.paths import PathError
from opspec.spec.yamlio import DataError

COMMANDS = (
    "validate",
    "drift",
    "browse",
    "check_decomp",
    "proposal",
    "release",
    "diff",
    "site",
    "coverage",
    "conform",
    "report",
    "strategies",
    "history",
    "check_program",
    "upgrade",
    "golden",
    "accuracy",
)


class UsageError(Exception):
    """Bad arguments found after parsing (unknown op, bad path): exit 2 with one line."""


def add_opset_option(parser) -> None:
    """``--opset V``: the opset version a subcommand reads (``args.opset_version``; None: the newest)."""
    parser.add_argument("--opset", dest="opset_version", metavar="V", help="opset version (default: newest)")


def dtype_names(option: str, names: list[str] | None, *, all_word: bool = False) -> list[str] | None:
    """The torch dtypes named with ``option``; None when none are (or, with ``all_word``, for 'all')."""
    if not names or (all_word and names == ["all"]):
        return None
    import torch

    for name in names:
        if not isinstance(getattr(torch, name, None), torch.dtype):
            raise UsageError(f"{option} {name}: not a torch dtype (e.g. float32, bfloat16, int64)"
                             + (" or 'all'" if all_word else ""))
    return names


def checkout(root: str | None) -> "workspace.Workspace":
    """The repository a writing command works on (``--root``, else the one around the cwd)."""
    ws = workspace.find(root)
    if not workspace.is_checkout(ws.root):
        raise UsageError(f"{ws.root} is not an opspec checkout (no opset/versions.yaml)")
    return ws


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opspec", description="The governed core ATen operator set.")
    from opspec import __version__

    parser.add_argument("--version", action="version", version=f"opspec {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code = 1
    try:
        pathargs.prepare_declared(args)
        code = args.func(args)
        return code
    except (UsageError, PathError) as err:
        print(f"opspec {args.command}: error: {err}", file=sys.stderr)
        code = 2
        return 2
    except OpsetError as err:
        for finding in err.findings:
            print(finding, file=sys.stderr)
        code = 2
        return 2
    except DataError as err:
        print(err, file=sys.stderr)
        code = 2
        return 2
    except KeyboardInterrupt:
        print("opspec: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        code = 0
        return 0
    finally:
        if code != 0:
            pathargs.discard_created()


def run() -> NoReturn:
    """The ``opspec`` program: :func:`main`, then an exit that skips tearing the interpreter down where nothing is
    left to wait for (after torch is imported that teardown takes a third of a second; the exit handlers still run)."""
    # opspec's draws come from its own strategies; hypothesis would otherwise scan every installed package's
    # metadata for plugins at import (about 0.3 s), and a plugin could change what a command draws.
    os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
    code = main()
    if threading.active_count() > 1:  # a thread the normal exit would join
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what it lost is lost either way
            pass
    atexit._run_exitfuncs()  # logging, multiprocessing, temporary folders: what exit handlers release
    os._exit(code)
