"""Small read-only questions to the engine that the CLI asks (``srb doctor``)."""

from __future__ import annotations

from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.images import _inspect


async def image_exists(engine: DockerEngine, ref: str) -> bool:
    """Whether an image ``ref`` (tag or id) is present locally."""
    api = await engine.api()
    return await engine.call(_inspect, api, ref) is not None
