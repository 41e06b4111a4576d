"""Everything opspec asks of the installed torch: op lookup, live schemas and tags,
the decomposition table, functional variants. Differences between torch versions
are absorbed here and nowhere else.

May import: ``spec``, ``decompositions``.
"""
