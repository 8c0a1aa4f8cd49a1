"""A run's provenance as label/value lines for the Score tab (short ids, one line each)."""

from __future__ import annotations

from srb_tui.store import RunRecord
from srb_tui.store.provenance import ModelRole, Provenance


def _short(value: str, width: int = 12) -> str:
    """A digest or commit cut to ``width`` hex digits (its prefix kept)."""
    head, sep, tail = value.partition(":")
    if sep and head in ("sha256", "sha512"):
        return f"{head}:{tail[:width]}"
    commit, plus, dirty = value.partition("+")
    if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit):
        return commit[:width] + plus + dirty
    return value


def _role(role: ModelRole) -> str:
    parts = [role.model or "—"]
    if role.effort:
        parts.append(role.effort)
    return " ".join(parts)


def provenance_lines(run: RunRecord) -> list[tuple[str, str]]:
    """(label, value) lines of ``run``'s provenance; one line saying none was recorded
    for runs launched before srb kept it (and imported runs)."""
    found = Provenance.read(run.extra)
    if found is None:
        return [("provenance", "not recorded (run launched before srb recorded it, or "
                               "imported)")]
    lines = [
        ("srb", f"{found.srb_version} @ {_short(found.source_commit)}"),
        ("grader", found.grader_fingerprint),
        ("task", _short(found.task_digest)),
        ("client", f"{found.client} {found.client_version}".strip()),
        ("agent", " · ".join(x for x in (found.agent.driver, _role(found.agent)
                                            if found.agent.model else "") if x)),
    ]
    if found.reviewer is not None:
        lines.append(("reviewer", _role(found.reviewer)))
    if found.adversaries:
        lines.append(("adversaries", ", ".join(f"{a.role} {_role(a)}"
                                               for a in found.adversaries)))
    lines.append(("backend", f"{found.backend} · node {found.node}"))
    for role, ident in found.image_digests.items():
        lines.append((f"image {role}", _short(ident) or "—"))
    if found.stages:
        lines.append(("stamped", ", ".join(found.stages)))
    return lines
