"""The proposal lifecycle: which status moves are allowed, and which only a release may make."""
from __future__ import annotations

ALLOWED: dict[str, frozenset[str]] = {
    "draft": frozenset({"review", "withdrawn"}),
    "review": frozenset({"draft", "accepted", "rejected", "withdrawn", "deferred"}),
    "deferred": frozenset({"draft"}),
    "accepted": frozenset({"implemented", "rejected", "withdrawn"}),
    "implemented": frozenset({"superseded"}),
    "rejected": frozenset(),
    "withdrawn": frozenset(),
    "superseded": frozenset(),
}
# Moves only `opspec release` makes, because they must match data it writes.
RELEASE_ONLY = frozenset({("accepted", "implemented")})


def move_problem(old: str, new: str, *, by_release: bool = False, target_released: bool = False) -> str | None:
    """Why ``old -> new`` is not allowed, or None when it is.

    ``target_released``: the proposal's target version is already released, so an
    accepted proposal can no longer be rejected or withdrawn quietly.
    """
    if old == new:
        return None
    allowed = ALLOWED.get(old)
    if allowed is None:
        return f"unknown status {old!r}"
    if new not in allowed:
        options = ", ".join(sorted(allowed)) or "none, it is final"
        return f"status cannot move from {old} to {new} (allowed from {old}: {options})"
    if (old, new) in RELEASE_ONLY and not by_release:
        return f"status {new} is set only by `opspec release`"
    if old == "accepted" and target_released and not by_release:
        return f"status cannot move from accepted to {new}: its target version is already released"
    return None
