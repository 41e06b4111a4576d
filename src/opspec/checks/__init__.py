"""Checks of the opset against the installed torch and of models and backends against
the opset: validate, drift, decomposition check, fused ops, coverage, strategy report.
Each returns plain findings; printing is the CLI's job.

May import: ``spec``, ``bridge``, ``testing``.
"""
