"""The comparison rule, the strategy layer that draws calls from schemas and hints,
and the checks for random ops.

May import: ``spec``, ``bridge``.
"""
