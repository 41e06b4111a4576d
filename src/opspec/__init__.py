"""opspec: the governed specification of PyTorch's core ATen operator set.

The packages are layers; data flows one way and each imports only the layers
listed before it (tests/test_layers.py keeps it so):

- ``spec``        the opset as data: model, YAML in/out, loading, manifests, workspace. No torch.
- ``bridge``      everything asked of the installed torch: op lookup, the decomposition table,
                  functional variants. Version differences live here.
- ``decompositions``  the rule implementations opspec ships where torch has none (torch only).
- ``testing``     the comparison rule, the input strategies, random-op checks.
- ``checks``      validate, drift, the decomposition check, fused ops, coverage, strategy report.
- ``conform``     the backend runner and its suites (ops, functionalization).
- ``proposals``   proposals, status transitions and release.
- ``reports``     changelog, terminal tables, the site generator and its templates.
- ``examples``    small models and a demo backend used by the docs and tests.
- ``cli``         argument parsing; torch is imported only by the subcommands that need it.
"""

__version__ = "0.1.0"
