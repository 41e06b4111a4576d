"""What opspec shows people: the changelog, terminal tables and the docs site.

May import: ``spec``, ``proposals`` (the site reads proposals and published reports, never torch).
"""
