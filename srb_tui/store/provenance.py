"""``provenance`` and ``provenance_stages``: which code, task, images and models made a run.

Two typed keys of ``runs.extra`` (see :mod:`srb_tui.store.run_extra` for the rules):

* ``provenance`` — one table, written whole when the run is launched and updated key by key
  at each later stamp (``merge_extra(into=...)``): srb's version and source commit, the
  grader fingerprint, the task directory's digest as loaded, the agent's client (name and
  version), model and effort, the Stage I reviewer's and every Stage III adversary's model
  and effort, the backend and node, and every image the run used by role.
* ``provenance_stages`` — a table of one stamp per stage (``launch``, ``preparing``,
  ``agent``, ``audit``, ``behavioural``, ``verification``): when it was taken, the images
  recorded by then (role → digest, else image id), the node, the grader fingerprint and the
  task digest at that point. Two stamps never overwrite each other.

Runs launched before provenance was recorded read as ``None``; ``srb report`` counts them
as "unrecorded" rather than guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from srb_tui.store.records import JsonRecord

PROVENANCE = "provenance"
PROVENANCE_STAGES = "provenance_stages"
NOT_A_CHECKOUT = "not a git checkout"


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class ModelRole(JsonRecord):
    """One model-driven role of a run: who (``role``: agent, reviewer, an adversary id),
    its driver or client, model and reasoning effort ("" when not set)."""

    role: str
    model: str
    effort: str = ""
    driver: str = ""

    @classmethod
    def of(cls, value: object) -> ModelRole | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("role"), str):
            return None
        return cls(str(value["role"]), _str(value.get("model")), _str(value.get("effort")),
                   _str(value.get("driver")))


@dataclass(frozen=True)
class ImageUse(JsonRecord):
    """The image a run used for one role: tag, image id and registry digest (when known)."""

    tag: str
    image_id: str = ""
    digest: str = ""

    @property
    def ident(self) -> str:
        """The strongest identity known: the registry digest, else the image id."""
        return self.digest or self.image_id

    @classmethod
    def of(cls, value: object) -> ImageUse | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("tag"), str):
            return None
        return cls(str(value["tag"]), _str(value.get("image_id")), _str(value.get("digest")))


@dataclass(frozen=True)
class StageStamp:
    """One ``provenance_stages`` entry."""

    at: str
    images: Mapping[str, str] = field(default_factory=dict)  # role -> digest or image id
    node: str = ""
    grader_fingerprint: str = ""
    task_digest: str = ""

    def to_json(self) -> dict[str, object]:
        return {"at": self.at, "images": dict(self.images), "node": self.node,
                "grader_fingerprint": self.grader_fingerprint,
                "task_digest": self.task_digest}

    @classmethod
    def of(cls, value: object) -> StageStamp | None:
        if not isinstance(value, Mapping) or not isinstance(value.get("at"), str):
            return None
        images = value.get("images")
        found = {str(k): str(v) for k, v in images.items()} if isinstance(images, Mapping) \
            else {}
        return cls(str(value["at"]), found, _str(value.get("node")),
                   _str(value.get("grader_fingerprint")), _str(value.get("task_digest")))


@dataclass(frozen=True)
class Provenance:
    """The ``provenance`` key, with the ``provenance_stages`` stamps beside it."""

    srb_version: str
    source_commit: str  # a commit id (``+dirty`` when the tree had changes), or NOT_A_CHECKOUT
    grader_fingerprint: str
    task_digest: str
    client: str  # the agent client's name (a built-in agent: its kind)
    client_version: str
    agent: ModelRole
    reviewer: ModelRole | None = None
    adversaries: tuple[ModelRole, ...] = ()
    backend: str = "local"
    node: str = "local"
    images: Mapping[str, ImageUse] = field(default_factory=dict)
    stages: Mapping[str, StageStamp] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The ``provenance`` table (the stage stamps are written apart: see :meth:`stamp`)."""
        return {
            "srb_version": self.srb_version, "source_commit": self.source_commit,
            "grader_fingerprint": self.grader_fingerprint, "task_digest": self.task_digest,
            "client": self.client, "client_version": self.client_version,
            "agent": self.agent.to_json(),
            "reviewer": None if self.reviewer is None else self.reviewer.to_json(),
            "adversaries": [a.to_json() for a in self.adversaries],
            "backend": self.backend, "node": self.node,
            "images": {role: img.to_json() for role, img in sorted(self.images.items())},
        }

    def full_json(self) -> dict[str, object]:
        """The record and its stage stamps as one document (``runs show --json``)."""
        return {**self.to_json(),
                "stages": {name: s.to_json() for name, s in self.stages.items()}}

    @property
    def image_digests(self) -> dict[str, str]:
        """role -> digest (else image id) of every image the run used."""
        return {role: img.ident for role, img in sorted(self.images.items())}

    @classmethod
    def read(cls, extra: Mapping[str, Any]) -> Provenance | None:
        t = extra.get(PROVENANCE)
        if not isinstance(t, Mapping) or not isinstance(t.get("grader_fingerprint"), str):
            return None
        agent = ModelRole.of(t.get("agent")) or ModelRole("agent", "")
        adversaries = tuple(a for a in (ModelRole.of(v) for v in t.get("adversaries") or ())
                            if a is not None)
        raw_images = t.get("images")
        images = {str(k): img for k, v in raw_images.items()
                  if (img := ImageUse.of(v)) is not None} \
            if isinstance(raw_images, Mapping) else {}
        raw_stages = extra.get(PROVENANCE_STAGES)
        stages = {str(k): s for k, v in raw_stages.items()
                  if (s := StageStamp.of(v)) is not None} \
            if isinstance(raw_stages, Mapping) else {}
        return cls(
            srb_version=_str(t.get("srb_version")),
            source_commit=_str(t.get("source_commit")) or NOT_A_CHECKOUT,
            grader_fingerprint=str(t["grader_fingerprint"]),
            task_digest=_str(t.get("task_digest")),
            client=_str(t.get("client")), client_version=_str(t.get("client_version")),
            agent=agent, reviewer=ModelRole.of(t.get("reviewer")), adversaries=adversaries,
            backend=_str(t.get("backend")) or "local", node=_str(t.get("node")) or "local",
            images=images, stages=stages,
        )

    def missing(self) -> list[str]:
        """The fields a launched run should carry and this record lacks (a test's check)."""
        gaps = [name for name in ("srb_version", "source_commit", "grader_fingerprint",
                                  "task_digest", "client", "client_version", "backend",
                                  "node") if not getattr(self, name)]
        if not self.agent.role:
            gaps.append("agent")
        if not self.images:
            gaps.append("images")
        return gaps


def stamp_changes(stage: str, stamp: StageStamp,
                  updates: Mapping[str, object]) -> dict[str, Mapping[str, object]]:
    """The ``into=`` argument of ``Store.runs.merge_extra`` that records one stage stamp and the
    ``provenance`` fields it updates, so concurrent stamps of other stages are kept."""
    return {PROVENANCE: dict(updates), PROVENANCE_STAGES: {stage: stamp.to_json()}}
