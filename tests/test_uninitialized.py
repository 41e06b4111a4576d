"""Inductor's C++ kernels built with patterned locals: a kernel that reads memory it never wrote fails every run."""
from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from test_conform import FAST, validate

from opspec.cli import main
from opspec.conform.backends import inductor as uninitialized
from opspec.conform.backends import registry

CXX = shutil.which("g++") or shutil.which("clang++")


def fake_compiler(tmp_path: Path, takes_flag: bool) -> str:
    """A compiler that builds anything but, unless ``takes_flag``, rejects the pattern flag as an old GCC does."""
    script = tmp_path / ("new-cxx" if takes_flag else "old-cxx")
    refuse = "" if takes_flag else ('case "$*" in *trivial-auto-var-init*) '
                                    'echo "cc1plus: error: unrecognized command-line option" >&2; exit 1;; esac\n')
    script.write_text(f"#!/bin/sh\n{refuse}exit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_compiler_without_the_flag_is_named_with_its_refusal(tmp_path):
    old = fake_compiler(tmp_path, takes_flag=False)
    assert uninitialized.refusal(old) == f"{old} refuses -{uninitialized.FLAG} (cc1plus: error: unrecognized command-line option)"
    assert uninitialized.refusal(fake_compiler(tmp_path, takes_flag=True)) == ""
    assert "did not run" in uninitialized.refusal(str(tmp_path / "no-such-compiler"))


def test_kernels_take_the_flag_only_while_inductor_compiles_and_only_where_the_compiler_does(tmp_path):
    from torch._inductor import cpp_builder

    new, old = fake_compiler(tmp_path, takes_flag=True), fake_compiler(tmp_path, takes_flag=False)
    with uninitialized.patterned_cpp_kernels():
        assert uninitialized.FLAG in cpp_builder._get_optimization_cflags(new)[0]
        assert uninitialized.FLAG not in cpp_builder._get_optimization_cflags(old)[0]
    assert uninitialized.FLAG not in cpp_builder._get_optimization_cflags(new)[0]


@pytest.mark.skipif(CXX is None or uninitialized.refusal(CXX) != "", reason="no C++ compiler here takes the pattern flag")
@pytest.mark.sweep  # two Inductor builds compared: `make sweep`
def test_an_index_reduction_that_reads_unwritten_lanes_fails_in_every_run(tmp_path):
    # Inductor's argmin over uint8: when every byte is 255 the tie is broken by index lanes the kernel never
    # wrote (conformance/expectations/inductor.yaml). Unpatterned, whether that shows depends on the stack.
    reports = []
    for run in ("first", "second"):
        path = tmp_path / f"{run}.json"
        main(["conform", "--backend", "inductor", "--ops", "argmin", "--dtypes", "uint8", "--report", str(path),
              "--no-expectations", *FAST])
        report = json.loads(path.read_text())
        validate(report)
        reports.append(report)
    for report in reports:
        assert report["backend"]["build"] == f"uninitialized locals in its C++ kernels: filled with a byte pattern (-{uninitialized.FLAG})"
        (record,) = report["results"]
        assert (record["status"], record["blame"]) == ("fail", "backend"), record["message"]
    assert reports[0]["results"][0]["message"] == reports[1]["results"][0]["message"]


def test_the_build_note_says_when_the_compiler_cannot_pattern(monkeypatch, tmp_path):
    from torch._inductor import cpp_builder

    old = fake_compiler(tmp_path, takes_flag=False)
    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", lambda *args: old)
    described = registry.lookup("inductor").build(registry.lookup("inductor"), None, True).describe()
    assert described["build"] == f"uninitialized locals in its C++ kernels: left as the compiler leaves them: {old} refuses -{uninitialized.FLAG} (cc1plus: error: unrecognized command-line option)"
