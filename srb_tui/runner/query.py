"""Small read-only questions to the engine that the CLI asks (``srb doctor``)."""

from __future__ import annotations

from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.images import inspect_image


async def image_exists(engine: DockerEngine, ref: str) -> bool:
    """Whether an image ``ref`` (tag or id) is present locally."""
    return await inspect_image(engine, ref) is not None
