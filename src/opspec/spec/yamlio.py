"""YAML in and out: a safe loader that keeps line numbers, and a diff-friendly dumper.

Every mapping and sequence that comes out of :func:`load_with_marks` remembers
where it stood in its file, so a finding can point at ``file:line:col``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from opspec.spec.gc_paused import gc_paused


@dataclass(frozen=True)
class Mark:
    path: str
    line: int  # 1-based
    col: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


class DataError(Exception):
    """A data file cannot be used at all; carries the place that broke it."""

    def __init__(self, mark: Mark, message: str):
        super().__init__(f"{mark}: {message}")
        self.mark = mark
        self.message = message


class MarkedDict(dict):
    mark: Mark
    key_marks: dict


class MarkedList(list):
    mark: Mark
    item_marks: list


# libyaml's parser when PyYAML has it (about 20x faster on the opset files); marks are the same.
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PLAIN_LOADER = _BaseLoader  # plain data, no line marks: libyaml where PyYAML was built with it


class _Loader(_BaseLoader):
    """Safe loader that rejects duplicate keys and attaches marks."""

    lines: list[str] | None = None  # the text's lines where a value a comment cuts short is an error (spec data)


def _refuse_cut_by_comment(loader: _Loader, node: yaml.Node, what: str) -> None:
    """A DataError for a one-line plain value its line goes on after, with `` #``: YAML reads the rest as a comment,
    so prose that holds a ``#`` (a count, ``#{j : ...}``) loses its tail without a word."""
    if loader.lines is None or not isinstance(node, yaml.ScalarNode) or node.style not in (None, ""):  # "": libyaml
        return
    start, end = node.start_mark, node.end_mark
    if start.line != end.line or end.line >= len(loader.lines):
        return
    rest = loader.lines[end.line][end.column:]
    if rest[:1].isspace() and rest.lstrip().startswith("#"):
        raise DataError(_mark(node, loader.name), f"{what} ends where ' #' starts a YAML comment: quote it if the '#' "
                        "belongs to it, or put the comment on a line of its own")


def _mark(node: yaml.Node, path: str) -> Mark:
    return Mark(path, node.start_mark.line + 1, node.start_mark.column + 1)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> MarkedDict:
    loader.flatten_mapping(node)
    result = MarkedDict()
    result.mark = _mark(node, loader.name)
    result.key_marks = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)) or key is None:
            raise DataError(_mark(key_node, loader.name), "mapping keys must be plain scalars")
        if key in result:
            raise DataError(_mark(key_node, loader.name), f"duplicate key {key!r}")
        _refuse_cut_by_comment(loader, value_node, f"the value of {key!r}")
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_marks[key] = _mark(key_node, loader.name)
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> MarkedList:
    for child in node.value:
        _refuse_cut_by_comment(loader, child, "this item")
    result = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
    result.mark = _mark(node, loader.name)
    result.item_marks = [_mark(child, loader.name) for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
# Timestamps would turn "2026-11-21" into a date object; the data keeps dates as text.
_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_text(text: str, path: str, *, comments_after_values: bool = True) -> Any:
    """Parse YAML text; any problem becomes a DataError with a position. ``comments_after_values=False`` (the spec's
    data, which is prose): a comment after a plain value on its line is an error, since it may have cut the value."""
    loader = _Loader(text)
    loader.name = path
    loader.lines = None if comments_after_values else text.splitlines()
    try:
        with gc_paused():  # a document is hundreds of thousands of objects, none of them garbage
            return loader.get_single_data()
    except DataError:
        raise
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = Mark(path, mark.line + 1, mark.column + 1) if mark else Mark(path, 1, 1)
        raise DataError(where, f"invalid YAML: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise DataError(Mark(path, 1, 1), f"invalid YAML: {err}") from None
    finally:
        loader.dispose()


def read_utf8(path: Path | str, display: str | None = None) -> str:
    """The file's text; an unreadable or non-UTF-8 file is a DataError marked where (``display``: the name shown)."""
    name = display or str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise DataError(Mark(name, 1, 1), f"cannot read file: {err.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise DataError(Mark(name, line, col), f"file is not valid UTF-8 (byte 0x{raw[err.start]:02x})") from None


def load_file(path: Path | str, *, comments_after_values: bool = True) -> Any:
    """Read and parse one YAML file; unreadable, non-UTF-8 and empty files are DataErrors."""
    name = str(path)
    data = load_text(read_utf8(path), name, comments_after_values=comments_after_values)
    if data is None:
        raise DataError(Mark(name, 1, 1), "file is empty")
    return data


def mark_of(node: Any, key: str | int | None = None, default: Mark | None = None) -> Mark:
    """Best position for ``node[key]`` (or ``node`` itself when key is None)."""
    if key is not None:
        if isinstance(node, MarkedDict) and key in node.key_marks:
            return node.key_marks[key]
        if isinstance(node, MarkedList) and isinstance(key, int) and 0 <= key < len(node):
            return node.item_marks[key]
    if isinstance(node, (MarkedDict, MarkedList)):
        return node.mark
    return default or Mark("<unknown>", 1, 1)


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, long text folded: data files are reviewed by people."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str):
    # One line per value (no folding) keeps schema strings greppable; multi-line text is literal.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(MarkedDict, yaml.representer.SafeRepresenter.represent_dict)
_Dumper.add_representer(MarkedList, yaml.representer.SafeRepresenter.represent_list)


def dump(data: Any, header: str = "") -> str:
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100_000, allow_unicode=True)
    return header + body
