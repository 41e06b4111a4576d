"""Proposals: one Markdown file each with YAML front matter, checked and moved through a fixed lifecycle."""
