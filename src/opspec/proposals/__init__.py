"""Proposals: one Markdown file each with YAML front matter, checked and moved through a
fixed lifecycle, and the release that applies the accepted ones to a new opset version.

May import: ``spec``; ``checks`` only lazily, for the measured checks a proposal needs.
"""
