"""Command palette provider: jump to a task by id."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from srb_tui.ui.app import SrbApp


class GoToProvider(Provider):
    """Offers "task <id>" for every task in the catalogue."""

    def _targets(self) -> list[tuple[str, str]]:
        app = cast("SrbApp", self.app)
        return [(f"task {tid}", tid) for tid in app.catalog.ids()]

    async def discover(self) -> Hits:
        for label, tid in self._targets():
            yield DiscoveryHit(label, partial(self._open_task, tid), help="Show this task")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, tid in self._targets():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), partial(self._open_task, tid),
                          help="Show this task")

    async def _open_task(self, task_id: str) -> None:
        from srb_tui.ui.screens.tasks import TasksScreen

        app = cast("SrbApp", self.app)
        await app.switch_mode("tasks")
        screen = app.screen
        if isinstance(screen, TasksScreen):
            screen.select_task(task_id)
