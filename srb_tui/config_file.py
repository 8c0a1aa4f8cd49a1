"""``state/config.toml``: its name and the top-level tables it may hold, in one place.

Three readers share the file, each parsing its own tables: the model gateway
(``[gateway]``, :mod:`srb_tui.gateway.config`), the image map (``[images]``,
:mod:`srb_tui.service.grading.image_plan`) and the execution backend (``[backend]`` and
``[engines.*]``, :mod:`srb_tui.runner.backend_config`). The gateway's reader also refuses a
table no reader knows (a typo would otherwise fall back to the defaults), so the list of
tables must be the readers' list: before it lived here the gateway refused ``[backend]``.
A leaf (standard library only), like :mod:`srb_tui.config`.
"""

from __future__ import annotations

from typing import Final

CONFIG_FILE: Final = "config.toml"

TABLES: Final[dict[str, str]] = {
    "gateway": "model gateway: upstreams, prices (srb_tui.gateway.config)",
    "images": "image map: a reference → a local image (srb_tui.service.grading.image_plan)",
    "backend": "where runs execute: local, engines or swarm (srb_tui.runner.backend_config)",
    "engines": "the engines of a pool, one table each (srb_tui.runner.backend_config)",
}
"""Every top-level table of the file, with the reader that owns it."""
