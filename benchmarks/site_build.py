"""Time `opspec site build` of this repository, the command the docs workflow runs.

    python benchmarks/site_build.py [--runs N]

Each run is a fresh process building into a scratch folder (the generated pages
are not rewritten), so it pays for importing torch, running every op page's
example, and the strict mkdocs build (two mkdocs processes on two or more cores,
the second one started while the op pages are still generated). Prints each run's
wall and CPU time (all processes), the time to the last generated page, the page
count and the load average around the runs (on a shared machine the wall time is
mostly waiting for a core).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = """
import sys
from pathlib import Path
from opspec.reports.site.build import build
from opspec.spec.workspace import Workspace
result = build(Workspace(Path(sys.argv[1])), Path(sys.argv[2]), write_generated=False)
print(f"pages={result.pages} generate={result.generate_seconds:.1f} total={result.seconds:.1f}")
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    walls = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="opspec-site-bench-") as folder:
            started = time.perf_counter()
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-c", CODE, str(ROOT), str(Path(folder) / "html")],
                                  capture_output=True, text=True)
            wall = time.perf_counter() - started
            cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        fields = dict(re.findall(r"(\w+)=([\d.]+)", done.stdout))
        walls.append(wall)
        print(f"run {run + 1}: {wall:.1f} s wall, {cpu:.1f} s CPU ({fields['total']} s in build: pages generated after "
              f"{fields['generate']} s, {fields['pages']} of them; the rest mkdocs; load average {os.getloadavg()[0]:.1f})")
    load_after = os.getloadavg()[0]
    print(f"median {sorted(walls)[len(walls) // 2]:.1f} s, max {max(walls):.1f} s over {len(walls)} runs "
          f"(load average {load_before:.1f} before, {load_after:.1f} after, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
