"""The backend runner: the backend contract, cases, isolation, expectations, reports,
and its suites (every core op; functionalization of in-place and ``out=`` variants).

May import: ``spec``, ``bridge``, ``testing``, ``checks``.
"""
