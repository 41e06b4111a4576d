"""Old spellings of options, kept working for one release.

``--opset VERSION`` names an opset version in every command, and ``--opset-dir PATH``
a folder of opset data. The spellings they replace (``ops --version V``,
``validate --opset PATH``, several versions after one ``golden --opset``) still work,
hidden from ``--help``; each use prints one line on stderr naming the new spelling,
so a script that relies on one is told before the old spelling goes.
"""
from __future__ import annotations

import argparse
import sys


def _warn(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    print(f"{parser.prog}: {old} is deprecated and goes in the next release; use {new}", file=sys.stderr)


class _Renamed(argparse.Action):
    """Stores its value where the new option does, after saying that the option was renamed."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        _warn(parser, option_string, self.new)
        setattr(namespace, self.dest, values)


def renamed(parser: argparse.ArgumentParser, old: str, new: str, **kwargs) -> None:
    """``old`` as a hidden alias of ``new`` (a spelling such as ``--opset VERSION``); ``kwargs`` are the new
    option's ``dest`` and ``type``, so both spellings fill the same argument."""
    parser.add_argument(old, action=_Renamed, new=new, help=argparse.SUPPRESS, **kwargs)


class RepeatedOne(argparse.Action):
    """A repeatable option of one value each (``--opset A --opset B``); several values after one use of it
    (``--opset A B``, the old spelling) are still taken, with a line saying to repeat the option instead."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs="+", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if len(values) > 1:
            _warn(parser, f"{option_string} {' '.join(values)}",
                  " ".join(f"{option_string} {value}" for value in values))
        setattr(namespace, self.dest, (getattr(namespace, self.dest, None) or []) + list(values))


class OneEachFormatter(argparse.HelpFormatter):
    """Usage and help show a :class:`RepeatedOne` option as taking one value: the old spelling stays unlisted."""

    def _format_args(self, action, default_metavar):
        if isinstance(action, RepeatedOne):
            return self._metavar_formatter(action, default_metavar)(1)[0]
        return super()._format_args(action, default_metavar)
