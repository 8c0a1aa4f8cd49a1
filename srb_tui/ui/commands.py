"""Command palette providers: jump to a task by id; run any key binding of the screen.

Textual makes the providers itself (from ``App.COMMANDS``), so nothing can be handed to
their constructors: the go-to provider asks the app for the one thing it needs, the task
catalogue, through :class:`HasCatalog`, checked when it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode

from srb_tui.service.catalog import Catalog


@runtime_checkable
class HasCatalog(Protocol):
    """An app that knows the task catalogue (the srb console does)."""

    @property
    def catalog(self) -> Catalog: ...


class GoToProvider(Provider):
    """Offers "task <id>" for every task in the catalogue."""

    def _targets(self) -> list[tuple[str, str]]:
        app = self.app
        if not isinstance(app, HasCatalog):
            return []
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

        await self.app.run_action("go('tasks')")
        screen = self.app.screen
        if isinstance(screen, TasksScreen):
            screen.select_task(task_id)


class BindingsProvider(Provider):
    """Every key binding of the screen the palette was opened on (its own and its
    widgets'), so what the footer has no room for is one search away. The app's own keys
    (Tasks, Runs, Quit, …) are system commands already; the keys Textual's widgets bring
    (cursor moves, scrolling; they carry no binding id) are left out, so the list starts
    with what srb itself offers."""

    def _targets(self) -> list[tuple[str, str, Callable[[], Awaitable[None]]]]:
        from textual.app import App

        found: list[tuple[str, str, Callable[[], Awaitable[None]]]] = []
        seen: set[tuple[int, str]] = set()
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if isinstance(node, App) or not enabled or not binding.description:
                continue
            if binding.id is None:  # a widget's own keys (cursor moves, scrolling): not srb's
                continue
            if (id(node), binding.action) in seen:
                continue
            seen.add((id(node), binding.action))
            key = self.app.get_key_display(binding)
            help_text = f"{key} · {tooltip or binding.tooltip or binding.description}"
            found.append((binding.description, help_text,
                          partial(self._run, node, binding.action)))
        return found

    async def _run(self, node: DOMNode, action: str) -> None:
        await self.app.run_action(action, node)

    async def discover(self) -> Hits:
        for label, help_text, command in self._targets():
            yield DiscoveryHit(label, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, help_text, command in self._targets():
            score = matcher.match(f"{label} {help_text}")
            if score > 0:
                yield Hit(score, matcher.highlight(label), command, help=help_text)
