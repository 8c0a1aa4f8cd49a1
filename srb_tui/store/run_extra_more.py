"""More typed records of ``runs.extra`` (:mod:`.run_extra` has the keys, the rules and the
lifecycle's records): the ones a run's launch never reads or writes.

The stages' tables (``behavioural_progress``, ``grading``, ``image_builds``), the import
record (``imported``), a strength mutant's (``strength``) and a campaign cell's
(``campaign``, ``max_cost_usd``). Each is a frozen dataclass, and creating those classes
is what importing a module of them costs: kept apart, ``srb run`` starts its agent
without them (bench/bench_launch.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from srb_tui.store.records import JsonRecord
from srb_tui.store.run_extra import (
    BEHAVIOURAL_PROGRESS,
    CAMPAIGN,
    CELL_MAX_COST,
    GRADING,
    IMAGE_BUILDS,
    IMPORTED,
    STRENGTH,
    _int,
    _num,
    _records,
    _str,
    _table,
)


@dataclass(frozen=True)
class ModuleProgress(JsonRecord):
    """``behavioural_progress``: a table of Stage II modules as the grader reports them
    while the suite runs (``module id -> record``): ``running`` from its start, then the
    module's status and counts once it ended. Dropped when the stage starts again."""

    module: str
    index: int
    total: int
    state: str
    at: str
    passed: int | None = None
    scored: int | None = None

    @classmethod
    def of(cls, value: object) -> ModuleProgress | None:
        t = value if isinstance(value, Mapping) else None
        if t is None:
            return None
        module, state = _str(t.get("module")), _str(t.get("state"))
        index, total = _int(t.get("index")), _int(t.get("total"))
        if not module or not state or index is None or total is None:
            return None
        return cls(module, index, total, state, _str(t.get("at")) or "",
                   _int(t.get("passed")), _int(t.get("scored")))

    @classmethod
    def read_all(cls, extra: Mapping[str, Any]) -> dict[str, ModuleProgress]:
        return _records(extra, BEHAVIOURAL_PROGRESS, cls.of)


@dataclass(frozen=True)
class StrengthRef(JsonRecord):
    """``strength``: the run is Stage III of one mutant of a strength campaign (issue 36),
    not an agent's submission; Stage I was skipped and Stage II graded by the campaign."""

    campaign_id: str
    mutant_id: str
    key: str
    describe: str

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> StrengthRef | None:
        t = _table(extra, STRENGTH)
        if t is None:
            return None
        campaign, mutant = _str(t.get("campaign_id")), _str(t.get("mutant_id"))
        if campaign is None or mutant is None:
            return None
        return cls(campaign, mutant, _str(t.get("key")) or "", _str(t.get("describe")) or "")


@dataclass(frozen=True)
class ImportedFrom:
    """``imported``: the run was read from a published harness's job folder by ``srb
    import`` (``source_dir``: that folder, None when it was not recorded)."""

    source_dir: str | None

    def to_json(self) -> dict[str, object]:
        return {"source_dir": self.source_dir}

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> ImportedFrom | None:
        t = _table(extra, IMPORTED)
        if t is None:
            return None
        source = t.get("source_dir")
        return cls(str(source) if source else None)


def _pairs(value: object) -> tuple[Mapping[str, Any], ...]:
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class StageGrading:
    """``grading``: per stage role, who graded and under which limits (the stage
    container's record), and for ``behavioural`` the modules that gave the exec boundary
    up or saw the suite change."""

    uid: int | None
    modules_as_root: bool
    declared_by: str | None
    submission_launcher_uid: str | None
    no_new_privileges: bool
    memory_mb: int | None
    cpus: float | None
    pids: int | None
    capabilities: tuple[str, ...]
    network: str | None
    candidate_boundary: str | None
    boundary_given_up: tuple[Mapping[str, Any], ...] = ()
    suite_tampering: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def of(cls, value: object) -> StageGrading | None:
        t = value if isinstance(value, Mapping) else None
        if t is None:
            return None
        caps = t.get("capabilities")
        return cls(_int(t.get("uid")), t.get("modules_as_root") is True,
                   _str(t.get("declared_by")), _str(t.get("submission_launcher_uid")),
                   t.get("no_new_privileges") is True, _int(t.get("memory_mb")),
                   _num(t.get("cpus")), _int(t.get("pids")),
                   tuple(str(c) for c in caps) if isinstance(caps, list) else (),
                   _str(t.get("network")), _str(t.get("candidate_boundary")),
                   _pairs(t.get("boundary_given_up")), _pairs(t.get("suite_tampering")))

    @classmethod
    def read_all(cls, extra: Mapping[str, Any]) -> dict[str, StageGrading]:
        return _records(extra, GRADING, cls.of)


@dataclass(frozen=True)
class ImageBuild:
    """``image_builds``: per stage role, a stage image built with build arguments or image
    substitutions (its tag, the arguments, the ``(from, to)`` image map)."""

    tag: str
    buildargs: Mapping[str, str]
    image_map: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, object]:
        return {"tag": self.tag, "buildargs": dict(self.buildargs),
                "image_map": [list(pair) for pair in self.image_map]}

    @classmethod
    def of(cls, value: object) -> ImageBuild | None:
        t = value if isinstance(value, Mapping) else None
        if t is None or _str(t.get("tag")) is None:
            return None
        args = _table(t, "buildargs") or {}
        found = t.get("image_map")
        pairs = found if isinstance(found, list) else []
        return cls(str(t["tag"]), {str(k): str(v) for k, v in args.items()},
                   tuple((str(p[0]), str(p[1])) for p in pairs
                         if isinstance(p, list) and len(p) == 2))

    @classmethod
    def read_all(cls, extra: Mapping[str, Any]) -> dict[str, ImageBuild]:
        return _records(extra, IMAGE_BUILDS, cls.of)


@dataclass(frozen=True)
class CampaignCell:
    """``campaign`` and ``max_cost_usd``: the campaign whose cell launched the run, and the
    cost ceiling its configuration allowed (the gateway enforces it as ``budget``; kept here
    so a report can show what each cell was allowed)."""

    campaign: str
    max_cost_usd: float | None = None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {CAMPAIGN: self.campaign}
        if self.max_cost_usd is not None:
            doc[CELL_MAX_COST] = self.max_cost_usd
        return doc

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> CampaignCell | None:
        campaign = _str(extra.get(CAMPAIGN))
        return None if campaign is None else cls(campaign, _num(extra.get(CELL_MAX_COST)))
