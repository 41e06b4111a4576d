"""`opspec proposal new`: a fresh proposal from the packaged template, with the next free id."""
from __future__ import annotations

import datetime as _dt
import json
import subprocess
import textwrap
from pathlib import Path

import jinja2

from opspec.proposals.companions import Companions
from opspec.proposals.model import file_number, slugify
from opspec.spec import resources, yamlio

TEMPLATES = resources.TEMPLATES


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,  # Markdown and YAML, not HTML; values go through the `yaml` filter
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["yaml"] = yaml_scalar
    return env


def yaml_scalar(value: object) -> str:
    """One YAML scalar, quoted when plain text would be misread (``: ``, leading ``-``...)."""
    text = yamlio.dump(value)
    if text.endswith("\n...\n"):  # the dumper closes a bare plain scalar as a document
        text = text[: -len("\n...\n")]
    return text.strip()


def next_id(directory: Path) -> int:
    numbers = [file_number(p) for p in directory.glob("[0-9]*.md")] if directory.is_dir() else []
    prefixes = [int(p.name[:4]) for p in directory.glob("[0-9][0-9][0-9][0-9]*") if p.name[:4].isdigit()] if directory.is_dir() else []
    return max([n for n in numbers if n] + prefixes + [0]) + 1


def default_author() -> str:
    try:
        name = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name if len(name) >= 2 else "TODO"


def render(*, id: int, type: str, title: str, op: str | None, author: str, date: str, schema: str | None = None,
           rule: dict | None = None, testing: dict | None = None, motivation: str | None = None,
           removed_rule: dict | None = None, companions: Companions | None = None) -> str:
    """The template filled in; ``schema``, ``rule``, ``testing`` (the hints being changed, or an added op's first
    hints) and ``motivation`` carry what the opset or a measurement already knows. For an add-op,
    ``removed_rule`` is the rule that decomposes the op today (the proposal drops it) and ``companions`` what the
    shared files already hold for it."""
    return environment().get_template("proposal.md.j2").render(
        id=id, type=type, title=title, op=op or "aten::TODO", author=author, date=date, schema=schema, rule=rule,
        rule_block=textwrap.indent(yamlio.dump({"rule": rule}), "    ") if rule else "",
        testing_block=textwrap.indent(yamlio.dump({"testing": testing or {}}), "    "), motivation=motivation,
        removed_rule=removed_rule, companions=companions, categories=categories(), call=torch_call(op or "aten::TODO"),
    )


def categories() -> list[str]:
    """The categories a core op may have, as the schema lists them."""
    schema = json.loads((resources.schema_dir() / "core_ops.schema.json").read_text(encoding="utf-8"))
    return list(schema["$defs"]["op"]["properties"]["category"]["enum"])


def torch_call(op: str) -> str:
    """How Python calls the op: aten::add.Tensor -> torch.ops.aten.add.Tensor, aten::abs -> torch.ops.aten.abs.default."""
    namespace, _, name = op.partition("::")
    base, _, overload = name.partition(".")
    return f"torch.ops.{namespace}.{base}.{overload or 'default'}"


def create(directory: Path, *, type: str, title: str, op: str | None = None, author: str | None = None,
           date: str | None = None, **known) -> Path:
    """Write the new proposal (never over an existing file) and return its path."""
    number = next_id(directory)
    path = directory / f"{number:04d}-{slugify(title)}.md"
    text = render(id=number, type=type, title=title, op=op, author=author or default_author(),
                  date=date or _dt.date.today().isoformat(), **known)
    directory.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8", newline="\n") as handle:  # "x": a racing `new` cannot clobber
        handle.write(text)
    return path
