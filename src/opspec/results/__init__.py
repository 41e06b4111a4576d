"""The conformance report as a model: what ``opspec conform`` writes and every reader of reports reads.

Torch-free, on the ground floor beside ``spec``: a report can be merged, rejudged,
charted and published on a machine without torch. ``vocabulary`` holds the words
a report uses (statuses, who executed an op, who failed, lowering statuses);
``model`` the frozen types, each with ``from_dict``/``to_dict`` that round-trip the
report schema (``opset/schema/conformance_report.schema.json``).
"""
