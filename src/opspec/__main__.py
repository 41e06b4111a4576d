from opspec.cli import run

run()
