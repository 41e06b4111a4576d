"""The documentation site: Markdown pages generated from the data, then built by mkdocs."""
