"""What every stage shares besides its container: the outcome the ladder scores from, the
stage result of a stage that could not run, option readers, and :func:`with_fault`.

The container paths and mounts are in :mod:`.stage_layout`, the container itself in
:mod:`.stage_container`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from srb_tui.grader.envelope import StageEnvelope
from srb_tui.runner import RunnerError
from srb_tui.schema import StageSpec

from .base import Publish as Publish
from .base import StageFault as StageFault
from .base import image_tag as image_tag
from .base import stage_context as stage_context
from .base import tests_dir as tests_dir
from .stage_images import StageImages as StageImages


@dataclass
class StageOutcome:
    """What one stage produced, in the shape the ladder scores from."""

    stage: str
    status: str
    """ok | error (the stage-result status)"""
    envelope: dict[str, Any]
    harness_error: str | None = None
    audit_gate: str | None = None
    behavioural_complete: bool | None = None
    modules: list[dict[str, Any]] = field(default_factory=list)
    adversaries: dict[str, str] = field(default_factory=dict)
    breaks: list[dict[str, Any]] = field(default_factory=list)


def error_envelope(stage: str, task: str, message: str, **metadata: Any) -> dict[str, Any]:
    """A stage result for a stage that could not run at all."""
    envelope = StageEnvelope(stage=stage, task=task)
    envelope.notes.append(message)
    envelope.metadata = dict(metadata)
    envelope.finish("error")
    return envelope.to_dict()


def option_str(spec: StageSpec, key: str, default: str) -> str:
    value = spec.options.get(key)
    return value if isinstance(value, str) and value else default


def option_number(spec: StageSpec, key: str, default: float) -> float:
    value = spec.options.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default


def option_strings(spec: StageSpec, key: str) -> list[str]:
    value = spec.options.get(key)
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return []


async def with_fault(
    stage: str, task: str, body: Callable[[], Awaitable[StageOutcome]]
) -> StageOutcome:
    """Run a stage body; a harness failure becomes an ``error`` outcome naming the stage."""
    try:
        return await body()
    except StageFault as err:
        message = str(err)
    except RunnerError as err:
        message = f"{stage}: {err}"
    except (OSError, ValueError) as err:
        message = f"{stage}: {type(err).__name__}: {err}"
    if not message.startswith(stage):
        message = f"{stage}: {message}"
    return StageOutcome(
        stage=stage,
        status="error",
        envelope=error_envelope(stage, task, message),
        harness_error=message,
    )
