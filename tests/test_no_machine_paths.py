"""No committed file names the machine that wrote it: no absolute path of a checkout, a home folder or a scratch
folder in the text files git tracks, nor in the records of the golden programs (.pt2 archives, whose stack
traces torch.export saves with the exporting files' paths)."""
from __future__ import annotations

import base64
import binascii
import io
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()  # it spells out the allowed mentions below

# a path that starts at a root folder (not a relative path ending in one of these names): a home folder, a scratch
# folder, a checkout under /work, or macOS's per-user temporary folders
GENERIC = r"(?<![\w./~-])/(?:root|work|tmp|home/[^/\s\"']+|Users/[^/\s\"']+|private/var/folders|var/folders)/"
MACHINE_PATH = re.compile(rf"(?:{re.escape(str(ROOT))}/|{GENERIC})[^\s\"'`)\]\\,;]*")

# Mentions that name no machine: each is a scratch path in a recipe or usage example the reader runs on their own
# machine, chosen by them. Keyed by file and the exact path mentioned.
ALLOWED = {
    ("benchmarks/README.md", "/tmp/pre22"): "the worktree of an earlier commit the timing recipe makes",
    ("benchmarks/README.md", "/tmp/bench-inductor-cpu.json"): "the scratch report of the benchmark's command",
    ("benchmarks/CHANGELOG.md", "/tmp/pre22"): "the same recipe, as the dated write-up gave it",
    ("benchmarks/CHANGELOG.md", "/tmp/bench-inductor-cpu.json"): "the same command, as the dated write-up gave it",
    ("benchmarks/conform_time.py", "/tmp/before"): "the usage text's example worktree for --before",
    ("benchmarks/model_zoo.py", "/tmp/x.json"): "the usage text's example --out",
    ("benchmarks/xla_coverage.py", "/tmp/x.json"): "the usage text's example --out",
    ("conformance/results/README.md", "/tmp/pins.txt"): "the pins file the XLA venv recipe writes and reads",
}


def machine_paths(text: str) -> list[tuple[int, str]]:
    """(line number, path) of each absolute machine path in ``text``."""
    return [(number, match.group(0)) for number, line in enumerate(text.splitlines(), 1)
            for match in MACHINE_PATH.finditer(line)]


def archive_texts(label: str, data: bytes):
    """(label, text) of every record of a zip archive, nested archives and base64-encoded records opened too."""
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                yield from archive_texts(f"{label}:{info.filename}", archive.read(info))
        return
    if label.endswith(".b64"):
        try:
            yield from archive_texts(label, base64.b64decode(data, validate=True))
            return
        except binascii.Error:
            pass
    yield label, data.decode("latin-1")


def file_texts(relative: str):
    """(label, text) of a tracked file: a text file as it is, a .pt2 archive record by record, other binaries not."""
    data = (ROOT / relative).read_bytes()
    if relative.endswith(".pt2"):
        yield from archive_texts(relative, data)
    elif b"\0" not in data:
        yield relative, data.decode("utf-8", errors="replace")


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no list of tracked files")
    return [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]


def test_no_tracked_file_holds_a_machine_path():
    hits = [f"{label}:{number}: {path}"
            for relative in tracked_files() if relative != THIS
            for label, text in file_texts(relative)
            for number, path in machine_paths(text) if (relative, path) not in ALLOWED]
    assert not hits, "absolute paths of the machine that wrote them:\n" + "\n".join(hits)


def test_every_allowed_mention_is_still_there():
    """An allowance whose mention is gone would let the same path back in unnoticed."""
    stale = [f"{relative}: {path}" for relative, path in ALLOWED
             if path not in {found for _, text in file_texts(relative) for _, found in machine_paths(text)}]
    assert not stale, "allowed but no longer mentioned:\n" + "\n".join(stale)


@pytest.mark.parametrize("text", [
    f"AssertionError: {ROOT}/opset/special_cases/abs.yaml:3: row false",
    'File "/home/runner/work/opspec/opspec/tools/make_golden.py", line 54, in forward',
    "report: /tmp/run1/inductor-cuda.json", "cache in /tmp/pytest-of-root/pytest-3/x", "/root/.cache/x",
    "see /work/venvs/zoo-cpu/lib/python3.11/site-packages/torch/nn/modules/linear.py",
    "/Users/someone/opspec/x.py", "/private/var/folders/ab/T/x"])
def test_machine_paths_are_found(text):
    assert machine_paths(text)


@pytest.mark.parametrize("text", [
    "opset/special_cases/abs.yaml:3", "~/.cache/opspec/venvs/torch-2.9.0/bin/pip", "benchmarks/work/out.json",
    "https://example.org/home/x/page", "/usr/bin/chromium", "$HOME/.cache/opspec", "/dev/null"])
def test_neutral_paths_are_not(text):
    assert not machine_paths(text)


def test_archive_records_are_read_nested_and_decoded():
    inner, outer = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02X\x0b\x00\x00\x00/tmp/x.yaml")
    with zipfile.ZipFile(outer, "w") as archive:
        archive.writestr("p/models/model.json", '{"stack_trace": "File \\"/root/x.py\\", line 1"}')
        archive.writestr("p/extra/recorded.b64", base64.b64encode(inner.getvalue()))
    found = {label: [path for _, path in machine_paths(text)] for label, text in archive_texts("p.pt2", outer.getvalue())}
    assert found == {"p.pt2:p/models/model.json": ["/root/x.py"],
                     "p.pt2:p/extra/recorded.b64:archive/data.pkl": ["/tmp/x.yaml"]}


def test_written_paths_are_made_portable():
    """What the benchmark scripts and tools/make_golden.py apply before they write."""
    from opspec.spec import portable

    text = (f'File "{ROOT}/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 1\n'
            f'File "{ROOT}/tools/make_golden.py", line 54\n'
            'File "/work/venvs/zoo-cpu/lib/python3.11/site-packages/transformers/activations.py", line 2\n'
            f"{Path.home()}/.cache/opspec/venvs")
    assert portable.portable_text(text, ROOT) == ('File "torch/nn/modules/linear.py", line 1\n'
                                                  'File "tools/make_golden.py", line 54\n'
                                                  'File "transformers/activations.py", line 2\n'
                                                  "~/.cache/opspec/venvs")
    data = {"runs": [{"message": f"{ROOT}/opset/special_cases/abs.yaml:3: false", "seconds": 1.5}], "ok": True}
    assert portable.portable_data(data, ROOT) == {"runs": [{"message": "opset/special_cases/abs.yaml:3: false",
                                                            "seconds": 1.5}], "ok": True}
    assert portable.portable_json({"path": f"{ROOT}/x"}, ROOT, indent=1) == '{\n "path": "x"\n}\n'
