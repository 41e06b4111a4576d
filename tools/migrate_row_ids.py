"""One-shot: give every special-case row a stable id and cite rows by ``FILE#id`` instead of ``FILE:LINE``.

Each row gets ``id: OP-CLASS`` (the op without ``aten::``), with a few words of its claim
where several rows of one op share a class. The ids are written into the data once and
never derived again: a row keeps its id when its claim is reworded.

Then every committed citation of a row by line is rewritten. Where a message quotes the
row's claim right after the citation, that claim names the row; otherwise the citation is
resolved in the revision that wrote it (``git blame``): the row that stood at that line then
is found again today by op and claim (exactly, else the closest claim of that op's rows,
printed for review). Several ops' rows make the same claim, so a citation is then pointed at
the row of the op its record, expectation entry or result names (:func:`repair_json`,
:func:`repair_expectations`). Reports keep their layout; only the citations change.

It ran once, on 2026-12-06; the ids it wrote are data from then on, and it refuses files
that already have them.

    python tools/migrate_row_ids.py [--dry-run]   # writes ids into opset/special_cases, rewrites citations
"""
from __future__ import annotations

import json
import functools
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ROWS = "opset/special_cases"
STOP = set("""a an the of is are and or to in on at for with its it as by be gives give gives returns return not that this
than from each every one which when where so no into only also both either any same their there has have was were been but
while does do keeps keep stays stay get gets like per""".split())
FILES = sorted(p.name for p in (ROOT / ROWS).glob("*.yaml"))
CITE = re.compile(r"(?P<prefix>(?:opset/special_cases/)?)(?P<file>" + "|".join(re.escape(f) for f in FILES) + r"):(?P<line>\d+)(?![\d])")
FOLLOW = re.compile(r"(?P<lead>\(|, ):(?P<follow>\d+)(?=[),])")  # ":761" after a cited file, in prose
ROW_START = re.compile(r"^    - says: (.+)$")
SAYS_AFTER_ID = re.compile(r"^      says: (.+)$")
OP_KEY = re.compile(r"^  (aten::\S+):\s*$")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("±", "pm").replace("-0.0", "negzero").replace("+0.0", "poszero"))


def derive_ids(rows: list[tuple[str, str, str]]) -> list[str]:
    """(op, class, says) in file order -> ids unique within the file."""
    bases = [f"{op.removeprefix('aten::')}-{klass}" for op, klass, _ in rows]
    ids = list(bases)
    for base in set(bases):
        group = [i for i, b in enumerate(bases) if b == base]
        if len(group) == 1:
            continue
        op, klass, _ = rows[group[0]]
        skip = STOP | set(words(op.removeprefix("aten::"))) | set(words(klass))
        slugs = {i: [w for w in words(rows[i][2]) if w not in skip] for i in group}
        for n in range(2, 8):
            named = {i: "-".join(slugs[i][:n]) for i in group}
            if len(set(named.values())) == len(group) and all(named.values()):
                break
        seen: dict[str, int] = {}
        for i in group:
            slug = named[i] or "row"
            seen[slug] = seen.get(slug, 0) + 1
            ids[i] = f"{base}-{slug}" + (f"-{seen[slug]}" if seen[slug] > 1 else "")
    assert len(set(ids)) == len(ids), "ids collide"
    return ids


def rows_of(text: str) -> list[tuple[int, str, str, str]]:
    """(line of ``- says:``, op, class, says) of a special-case file's text."""
    lines, out, op = text.splitlines(), [], None
    for number, line in enumerate(lines, 1):
        if key := OP_KEY.match(line):
            op = key.group(1)
        elif start := ROW_START.match(line) or (SAYS_AFTER_ID.match(line) if lines[number - 2].startswith("    - id: ") else None):
            klass = next(re.match(r"^      class: (\S+)", later).group(1) for later in lines[number:]
                         if later.startswith("      class: "))
            out.append((number, op, klass, str(yaml.safe_load("says: " + start.group(1))["says"])))
    return out


def write_ids() -> dict[str, dict[int, str]]:
    """Ids into every special-case file; file -> {old line of the row: id}."""
    placed: dict[str, dict[int, str]] = {}
    for name in FILES:
        path = ROOT / ROWS / name
        text = ORIGINAL[name] = path.read_text()
        assert "\n    - id: " not in text, f"{name} already has ids"
        rows = rows_of(text)
        ids = derive_ids([(op, klass, says) for _, op, klass, says in rows])
        lines = text.splitlines(keepends=True)
        for (number, *_), row_id in zip(rows, ids):
            lines[number - 1] = lines[number - 1].replace("    - says: ", f"    - id: {row_id}\n      says: ", 1)
        WRITTEN[name] = "".join(lines)
        placed[name] = {number: row_id for (number, *_), row_id in zip(rows, ids)}
    return placed


ORIGINAL: dict[str, str] = {}  # the special-case files as they were before ids, for lines not yet committed
WRITTEN: dict[str, str] = {}  # and with ids


@functools.lru_cache(maxsize=None)
def rows_at(revision: str, name: str) -> tuple[str, ...]:
    if set(revision) == {"0"}:
        return tuple(ORIGINAL[name].splitlines())
    shown = subprocess.run(["git", "show", f"{revision}:{ROWS}/{name}"], cwd=ROOT, capture_output=True, text=True)
    return tuple(shown.stdout.splitlines())


@functools.lru_cache(maxsize=None)
def current() -> dict[str, list[tuple[str, str, str]]]:
    """file -> [(op, says, id)] of the working tree, after the ids are written."""
    found = {}
    for name in FILES:
        text = WRITTEN[name]
        ids = re.findall(r"^    - id: (\S+)$", text, re.M)
        found[name] = [(op, says, row_id) for (_, op, _, says), row_id in zip(rows_of(text), ids)]
    return found


def claim_at(revision: str, name: str, line: int) -> tuple[str, str] | None:
    """(op, says) of the row that stood at ``line`` of ``name`` in ``revision``, reading upward to its start."""
    lines = rows_at(revision, name)
    if not 0 < line <= len(lines):
        return None
    for number in range(line, 0, -1):
        start = ROW_START.match(lines[number - 1])
        if start:
            op = next(m.group(1) for l in reversed(lines[:number]) if (m := OP_KEY.match(l)))
            return op, str(yaml.safe_load("says: " + start.group(1))["says"])
        if OP_KEY.match(lines[number - 1]):
            return None
    return None


def stated(name: str, after: str) -> str | None:
    """The id of the row of ``name`` whose claim the text right after a citation quotes (messages state it)."""
    window = after[:700]
    quoted = [(window.find(form), -len(says), row_id) for _, says, row_id in current()[name]
              for form in {says, json.dumps(says)[1:-1], repr(says)[1:-1]} if form in window]
    return min(quoted)[2] if quoted else None


def likeness(a: str, b: str) -> float:
    """Shared words over all words (a reworded claim keeps most of its words)."""
    x, y = set(words(a)), set(words(b))
    return len(x & y) / max(1, len(x | y))


def resolve(revision: str, name: str, line: int, where: str, after: str = "") -> str:
    """The id today of the row cited as ``name:line`` in ``revision`` (or whose claim follows the citation)."""
    if (row_id := stated(name, after)) is not None:
        return row_id
    claim = claim_at(revision, name, line)
    if claim is None:
        raise SystemExit(f"{where}: {name}:{line} names no row in {revision[:10]}")
    op, says = claim
    rows = current()[name]
    for row_op, row_says, row_id in rows:
        if row_op == op and row_says == says:
            return row_id
    own = [(row_says, row_id) for row_op, row_says, row_id in rows if row_op == op] or \
          [(row_says, row_id) for _, row_says, row_id in rows]
    ranked = sorted(own, key=lambda r: -likeness(r[0], says))
    best, ratio = ranked[0], likeness(ranked[0][0], says)
    if ratio < 0.25 or (len(ranked) > 1 and ratio - likeness(ranked[1][0], says) < 0.05):
        raise SystemExit(f"{where}: {name}:{line} ({op}: {says!r}) has no row like it now")
    print(f"  {where}: {name}:{line} reworded since {revision[:10]}: {says!r} -> {best[0]!r} ({ratio:.2f})")
    return best[1]


def blame(path: Path) -> list[str]:
    """The commit that last wrote each line of ``path`` (HEAD's version)."""
    out = subprocess.run(["git", "blame", "--porcelain", "--contents", str(path), "--", str(path.relative_to(ROOT))],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    commits = []
    for line in out.splitlines():
        head = re.match(r"^([0-9a-f]{40}) \d+ \d+", line)
        if head:
            commits.append(head.group(1))
    return commits


def rewrite_text(text: str, revisions: list[str], name: str) -> tuple[list[str], int]:
    """``text``'s lines with their citations by line rewritten (``revisions``: the commit that wrote each line)."""
    lines, count = text.splitlines(keepends=True), 0
    for index, line in enumerate(lines):
        if not CITE.search(line):
            continue
        revision, where = revisions[index], f"{name}:{index + 1}"
        out, last, file = [], 0, None
        for match in re.finditer(CITE.pattern + "|" + FOLLOW.pattern, line):
            if match.group("file"):
                file = match.group("file")
                new = f"{match.group('prefix')}{file}#{resolve(revision, file, int(match.group('line')), where, line[match.end():])}"
            elif file is not None:
                number = int(match.group("follow"))
                new = f"{match.group('lead')}#{resolve(revision, file, number, where)}"
            else:
                continue
            out.append(line[last:match.start()] + new)
            last = match.end()
            count += 1
        lines[index] = "".join(out) + line[last:]
    return lines, count


def rewrite(path: Path, dry: bool) -> int:
    """Every ``FILE:LINE`` (and a following ``(:LINE)`` or ``, :LINE``) in ``path`` as ``FILE#id`` (``#id``)."""
    text = path.read_text()
    if not CITE.search(text):
        return 0
    lines, count = rewrite_text(text, blame(path), str(path.relative_to(ROOT)))
    if not dry:
        path.write_text("".join(lines))
    return count


NEW = re.compile(r"(?P<file>" + "|".join(re.escape(f) for f in FILES) + r")#(?P<id>[A-Za-z0-9_][A-Za-z0-9_.-]*[A-Za-z0-9_])")


def owners() -> tuple[dict[tuple[str, str], tuple[str, str]], dict[tuple[str, str, str], str]]:
    """(file, id) -> (op, says), and (file, says, op) -> id: rows of several ops may make the same claim."""
    by_id, by_claim = {}, {}
    for name, rows in current().items():
        for op, says, row_id in rows:
            by_id[(name, row_id)] = (op, says)
            by_claim[(name, says, op)] = row_id
    return by_id, by_claim


def for_op(text: str, op: str | None) -> tuple[str, int]:
    """``text`` with each citation of a row of another op that makes the same claim as a row of ``op`` pointed at
    ``op``'s row: a claim quoted after a citation names a row only together with the record's op."""
    if not op:
        return text, 0
    by_id, by_claim = owners()
    fixed = 0

    def own(match: re.Match) -> str:
        nonlocal fixed
        cited_op, says = by_id.get((match["file"], match["id"]), (op, ""))
        mine = by_claim.get((match["file"], says, op))
        if cited_op == op or mine is None:
            return match.group(0)
        fixed += 1
        return f"{match['file']}#{mine}"
    return NEW.sub(own, text), fixed


def repair_json(value, op: str | None = None) -> tuple[object, int]:
    """A report (or benchmark result) with :func:`for_op` applied to every string, under the nearest ``op``."""
    if isinstance(value, dict):
        here = value.get("op") if isinstance(value.get("op"), str) and value["op"].startswith("aten::") else op
        total, out = 0, {}
        for key, item in value.items():
            out[key], n = repair_json(item, here)
            total += n
        return out, total
    if isinstance(value, list):
        pairs = [repair_json(item, op) for item in value]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if isinstance(value, str):
        return for_op(value, op)
    return value, 0


def repair_expectations(text: str) -> tuple[str, int]:
    blocks, total = re.split(r"(?m)^(?=  - op: )", text), 0
    for index, block in enumerate(blocks):
        op = re.match(r"  - op: (\S+)", block)
        blocks[index], n = for_op(block, op.group(1) if op else None)
        total += n
    return "".join(blocks), total


def repair(path: Path) -> int:
    """:func:`for_op` over a rewritten report, result or expectations file."""
    text = path.read_text()
    if path.suffix == ".json":
        data, fixed = repair_json(json.loads(text))
        indent = len(text.split("\n", 2)[1]) - len(text.split("\n", 2)[1].lstrip()) if text.startswith("{\n") else 1
        new = json.dumps(data, indent=indent) + "\n"
    elif path.parent.name == "expectations":
        new, fixed = repair_expectations(text)
    else:
        return 0
    if fixed:
        path.write_text(new)
    return fixed


def main() -> int:
    dry = "--dry-run" in sys.argv
    write_ids()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        path = ROOT / name
        if name.startswith((ROWS, "tests/", "tools/")) or path.suffix not in (".md", ".json", ".yaml", ".py"):
            continue
        if not path.is_file():
            continue
        count = rewrite(path, dry)
        if count and not dry:
            count += repair(path)
        if count:
            print(f"{name}: {count} citation(s)")
    if not dry:
        for name, text in WRITTEN.items():
            (ROOT / ROWS / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
