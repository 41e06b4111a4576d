"""opspec.spec.load: the one loader. A good version loads (once); every bad file is refused with its place."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from opspec.spec import load, resources
from opspec.spec.errors import OpsetError

VERSIONS = [info.version for info in load.load_versions(resources.opset_root())]
VERSION = VERSIONS[-1]  # the newest version: the one loaded when none is named


def findings_of(opset: Path, version: str | None = VERSION) -> list[str]:
    with pytest.raises(OpsetError) as caught:
        load.load_opset(version, opset)
    assert str(caught.value) == "\n".join(map(str, caught.value.findings))
    return [str(f) for f in caught.value.findings]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    stat = path.stat()  # a distinct mtime even on coarse clocks, so the cache sees the change
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def line_of(path: Path, fragment: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


def test_the_bundled_version_loads(opset_copy):
    opset = load.load_opset(None, opset_copy)
    assert opset.version == load.latest_version(opset_copy) == VERSION
    assert opset.info.version == VERSION and len(opset.ops) >= 193 and opset.rules
    assert [info.version for info in load.load_versions(opset_copy)] == VERSIONS


def test_a_version_is_loaded_once_until_its_files_change(opset_copy):
    first = load.load_opset(VERSION, opset_copy)
    assert load.load_opset(VERSION, opset_copy) is first
    edit(opset_copy / VERSION / "core_ops.yaml", "category: pointwise-unary", "category: misc")
    again = load.load_opset(VERSION, opset_copy)
    assert again is not first and again != first


def test_unknown_version(opset_copy):
    assert findings_of(opset_copy, "2031.01") == [
        f"{opset_copy / 'versions.yaml'}:1:1: unknown opset version '2031.01' (known: {', '.join(VERSIONS)})"]


def test_malformed_yaml_names_file_and_line(opset_copy):
    path = opset_copy / VERSION / "decompositions.yaml"
    edit(path, "    kind: default", "    kind: [default")
    (finding,) = findings_of(opset_copy)
    assert finding.startswith(f"{path}:") and "invalid YAML" in finding


def test_duplicate_key_names_its_line(opset_copy):
    path = opset_copy / VERSION / "core_ops.yaml"
    line = line_of(path, "status: active") + 1
    edit(path, "    status: active\n", "    status: active\n    status: active\n")
    (finding,) = findings_of(opset_copy)
    assert finding == f"{path}:{line}:5: duplicate key 'status'"


@pytest.mark.parametrize("old, new, key, message", [
    ("    category: convolution-pooling", "    category: convolution-pooling\n    colour: red", "colour", "unknown key 'colour'"),
    ("    category: convolution-pooling", "    category: pooling", "category", "'pooling' is not one of"),
    ("    status: active", "    status: retired", "status", "'retired' is not one of"),
])
def test_schema_errors_point_at_the_key(opset_copy, old, new, key, message):
    path = opset_copy / VERSION / "core_ops.yaml"
    edit(path, old, new)
    line = line_of(path, f"    {key}:")
    (finding,) = findings_of(opset_copy)
    assert finding.startswith(f"{path}:{line}:5: ops/0") and message in finding


def test_a_missing_required_key(opset_copy):
    path = opset_copy / VERSION / "core_ops.yaml"
    edit(path, "    since: '2026.11'\n", "")
    findings = findings_of(opset_copy)
    assert findings[0].startswith(f"{path}:4:5: ops/0: 'since' is a required property")


def test_every_finding_of_both_files_is_reported(opset_copy):
    edit(opset_copy / VERSION / "core_ops.yaml", "    status: active", "    status: retired")
    edit(opset_copy / VERSION / "decompositions.yaml", "    kind: default", "    kind: always")
    findings = findings_of(opset_copy)
    assert len(findings) == 2 and "core_ops.yaml" in findings[0] and "decompositions.yaml" in findings[1]


def test_a_bad_index(opset_copy):
    index = opset_copy / "versions.yaml"
    edit(index, "status: released", "status: sealed")
    (finding,) = findings_of(opset_copy, None)
    assert finding.startswith(f"{index}:") and "'sealed' is not one of" in finding
    index.unlink()
    (finding,) = findings_of(opset_copy, None)
    assert finding.startswith(f"{index}:1:1: cannot read file")


def test_a_missing_version_file(opset_copy):
    (opset_copy / VERSION / "decompositions.yaml").unlink()
    (finding,) = findings_of(opset_copy)
    assert "decompositions.yaml:1:1: cannot read file" in finding


def test_read_keeps_data_with_schema_findings(opset_copy):
    path = opset_copy / VERSION / "core_ops.yaml"
    edit(path, "    status: active", "    status: retired")
    loaded = load.read(path, "core_ops.schema.json")
    assert loaded.data["ops"][0]["status"] == "retired" and len(loaded.findings) == 1
    assert [index for index, _ in load.iter_entries(loaded, "ops")][:2] == [0, 1]
    assert list(load.iter_entries(loaded, "rules")) == []


def test_read_checked(tmp_path, opset_copy):
    with pytest.raises(OpsetError, match=r"nothing\.yaml:1:1: no such findings file"):
        load.read_checked(tmp_path / "nothing.yaml", "versions.schema.json", "findings")
    assert load.read_checked(opset_copy / "versions.yaml", "versions.schema.json", "index")["versions"][0]["version"] == VERSIONS[0]


def test_index_statuses_are_lenient_and_ordered():
    data = {"versions": [{"version": "2026.12", "status": "draft"}, {"status": "released"}, "junk",
                         {"version": "2026.2", "status": "released"}]}
    assert list(load.index_statuses(data).items()) == [("2026.2", "released"), ("2026.12", "draft")]
    assert load.index_statuses(None) == {} and load.index_statuses({"versions": "no"}) == {}


def test_the_digest_seals_names_and_bytes(opset_copy):
    digest = load.version_digest(opset_copy, VERSION)
    assert digest.startswith("sha256:") and digest == load.version_digest(opset_copy, VERSION)
    path = opset_copy / VERSION / "core_ops.yaml"
    path.write_text(path.read_text() + "\n")
    assert load.version_digest(opset_copy, VERSION) != digest


def test_a_description_a_comment_cuts_short_names_its_line(opset_copy):
    path = opset_copy / "descriptions.yaml"
    old = next(line for line in path.read_text().splitlines() if line.startswith("    formula: ") and "#" not in line)
    edit(path, old, "    formula: out_i = #{j : boundaries_j < self_i}")
    line = line_of(path, "    formula: out_i = #{j")
    with pytest.raises(OpsetError) as caught:
        load.load_descriptions(opset_copy)
    (finding,) = map(str, caught.value.findings)
    assert finding.startswith(f"{path}:{line}:14: the value of 'formula' ends where ' #' starts a YAML comment")
