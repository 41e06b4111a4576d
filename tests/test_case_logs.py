"""A case's output on its way to the run's log: repeated lines left out, capped, a runaway capture cut while it runs."""
from __future__ import annotations

from opspec.conform import torch_logs


def test_repeated_lines_are_left_out_numbers_aside_and_the_rest_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(torch_logs, "CASE_CAP", 1000)
    part, log = tmp_path / "case.log", tmp_path / "run.log"
    printed = (b"JIT compilation failed at node 17\n" + b"".join(b"retrying after %d ms\n" % i for i in range(500))
               + b"".join(f"unique {'x' * i}\n".encode() for i in range(200)))
    part.write_bytes(printed)
    settled = torch_logs.settle(part, str(log), "aten::sin float32 cpu")
    written = log.read_bytes()
    assert settled.bytes == len(printed) and settled.repeated_lines == 499
    assert settled.cut_bytes > len(printed) - 1000
    assert len(written) < 1400 and written.startswith(b"--- aten::sin float32 cpu\nJIT compilation failed at node 17\n")
    assert b"499 repeated lines" in written and not part.exists()
    assert settled.head[:2] == ["JIT compilation failed at node 17", "retrying after 0 ms"]


def test_a_runaway_capture_is_cut_while_it_runs_and_keeps_its_head(tmp_path, monkeypatch):
    monkeypatch.setattr(torch_logs, "RUNAWAY_CAP", 10_000)
    monkeypatch.setattr(torch_logs, "HEAD_BYTES", 1_000)
    part, log = tmp_path / "case.log", tmp_path / "run.log"
    part.write_bytes(b"first diagnostic\n" + b"x" * 20_000 + b"\n")
    cut = torch_logs.rein_in(part)
    assert cut == 20_018 - 1_000 and part.stat().st_size == 0
    assert torch_logs.rein_in(part) == 0  # under the cap: left alone
    with part.open("ab") as more:  # the worker goes on printing at the new end
        more.write(b"after the cut\n")
    settled = torch_logs.settle(part, str(log), "aten::_softmax float32 cpu", cut_before=cut)
    assert settled.head == ["first diagnostic", "x" * 300, "after the cut"]  # a line is shown to 300 characters
    assert settled.bytes == 20_018 + len(b"after the cut\n")
