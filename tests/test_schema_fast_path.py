"""The compiled schemas (jsonschema-rs) answer only whether a file is valid; jsonschema explains the errors. The two
must agree, or a file the compiled schema wrongly accepts would lose its findings."""
from __future__ import annotations

import pytest

from opspec.cli import main
from opspec.spec import load, resources


@pytest.fixture(scope="module")
def read_files() -> list[tuple[str, object]]:
    """(schema, data) of every file a validate of the bundled opset schema-checks."""
    seen = []
    real = load.schema_findings
    load.schema_findings = lambda data, name, *a, **k: seen.append((name, data)) or real(data, name, *a, **k)
    try:
        assert main(["validate", "--no-torch", "--no-cache"]) == 0
    finally:
        load.schema_findings = real
    return seen


SAMPLES = 60  # breaks tried per schema, spread over all of them


def broken(value):
    """Each value one step away from ``value``: a key left out, added or of another type, in every mapping."""
    if isinstance(value, dict):
        for key in list(value):
            yield {k: v for k, v in value.items() if k != key}
            for wrong in (17, "text", [], {}, None, True):
                if type(wrong) is not type(value[key]):
                    yield {**value, key: wrong}
            for inner in broken(value[key]):
                yield {**value, key: inner}
        yield {**value, "no_such_key": 1}
    elif isinstance(value, list) and value:
        for inner in broken(value[0]):
            yield [inner, *value[1:]]


def shortened(value):
    """``value`` with every list cut to its first item: the same forms, small enough to break many ways."""
    if isinstance(value, dict):
        return {key: shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shortened(item) for item in value[:1]]
    return value


def test_the_compiled_schema_agrees_with_jsonschema_on_every_file_and_every_break_of_it(read_files):
    schema_dir = resources.schema_dir()
    checked = invalid = 0
    first = {}
    for name, data in read_files:
        assert load._surely_valid(data, schema_dir, name)  # the files as shipped, marks and all
        first.setdefault(name, data)
    for name, data in first.items():
        small = shortened(data)
        variants = list(broken(small))
        for variant in [small, *variants[::max(1, len(variants) // SAMPLES)]]:
            explained = load._validator(schema_dir, name).is_valid(variant)
            assert load._surely_valid(variant, schema_dir, name) == explained, (name, variant)
            checked += 1
            invalid += not explained
    assert len(first) >= 10 and invalid > 300, (checked, invalid)
