"""The opset as data: frozen dataclasses, YAML in/out with marks, loading, manifests, workspace.

Imports nothing from opspec outside this package, and never torch.
"""
