"""How a task's images are built the way its Dockerfiles are written.

- Tags: ``[stages.<name>].image`` when the task gives one (the published tasks do:
  ``swerefactor/lang03-behavioural:1``), else srb's own ``srb-stage/<task>-<stage>:latest``.
- Build arguments, in dependency order (infra, environment, behavioural, verification):
  ``INFRA_IMAGE`` names the infra image when srb built one, ``BEHAVIOURAL_IMAGE`` the
  behavioural stage's image for a verification Dockerfile that takes it, ``BASE_IMAGE``
  srb's base image; a Dockerfile receives only the names it declares.
- The infra image: built from a checkout's ``infra/Dockerfile`` (the folder holding the
  task root, or its parent) and tagged ``swerefactor/infra:1`` as the published README
  builds it.
- The image map: ``[images]`` in ``state/config.toml`` (``"reference" = "local/image:tag"``)
  for sites without a registry, applied as a FROM substitution at build time and recorded
  with the run.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from srb_tui.config_file import CONFIG_FILE
from srb_tui.runner.dockerfile import read_dockerfile
from srb_tui.schema import Task
from srb_tui.schema.models import StageSpec

INFRA_TAG = "swerefactor/infra:1"
_TAG_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")


class ImageMapError(ValueError):
    """``[images]`` in state/config.toml is unusable; names the file and every bad key."""


def load_image_map(state_dir: Path) -> dict[str, str]:
    """The operator's image map (reference -> local image); empty when there is none."""
    path = Path(state_dir) / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ImageMapError(f"{path}: cannot read the image map: {err}") from err
    table = doc.get("images", {})
    if not isinstance(table, Mapping):
        raise ImageMapError(f"{path}: [images] must be a table of \"reference\" = \"image\"")
    problems: list[str] = []
    out: dict[str, str] = {}
    for ref, local in table.items():
        if not isinstance(local, str) or not _REF.match(local):
            problems.append(f'images."{ref}" must be a local image reference, not {local!r}')
        elif not _REF.match(str(ref)):
            problems.append(f'images."{ref}": the key is not an image reference')
        else:
            out[str(ref)] = local
    if problems:
        raise ImageMapError(f"{path}: " + "; ".join(problems))
    return out


def stage_spec(task: Task, stage: str) -> StageSpec | None:
    evaluation = task.evaluation
    spec = None if evaluation is None else getattr(evaluation, stage, None)
    return spec if isinstance(spec, StageSpec) else None


def stage_tag(task: Task, stage: str) -> str:
    """``[stages.<stage>].image`` when given, else ``srb-stage/<task>-<stage>:latest``."""
    spec = stage_spec(task, stage)
    declared = spec.options.get("image") if spec is not None else None
    if isinstance(declared, str) and declared.strip():
        return declared.strip()
    name = _TAG_UNSAFE.sub("-", task.id.lower()).strip("-.") or "task"
    return f"srb-stage/{name}-{stage}:latest"


def infra_context(task: Task) -> Path | None:
    """A checkout's ``infra/`` (with a Dockerfile) beside the task root or one level up."""
    for root in (task.dir.parent, task.dir.parent.parent):
        candidate = root / "infra"
        if (candidate / "Dockerfile").is_file():
            return candidate
    return None


def declared_args(context: Path, dockerfile: str = "Dockerfile") -> frozenset[str]:
    """The ``ARG`` names a build context's Dockerfile declares (empty if unreadable)."""
    try:
        text = (context / dockerfile).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(read_dockerfile(text).args)


def stage_buildargs(
    context: Path, *, infra_tag: str | None, behavioural_tag: str | None
) -> dict[str, str]:
    """The task-level build arguments this context's Dockerfile declares (BASE_IMAGE is
    added by the builder itself)."""
    names = declared_args(context)
    args: dict[str, str] = {}
    if infra_tag and "INFRA_IMAGE" in names:
        args["INFRA_IMAGE"] = infra_tag
    if behavioural_tag and "BEHAVIOURAL_IMAGE" in names:
        args["BEHAVIOURAL_IMAGE"] = behavioural_tag
    return args


def needs_behavioural(context: Path) -> bool:
    """Whether this Dockerfile builds on the behavioural image (``BEHAVIOURAL_IMAGE``)."""
    return "BEHAVIOURAL_IMAGE" in declared_args(context)
