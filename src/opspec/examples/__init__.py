"""Small models built in code, to try ``opspec coverage`` on without downloading anything.

Each factory in :mod:`opspec.examples.models` returns ``(module.eval(), example_inputs)``
with fixed seeds and small sizes, so a report is the same on every machine.
"""
