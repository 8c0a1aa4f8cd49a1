"""A footer that never cuts a binding in half: when the terminal is too narrow for every
key, the screen's ``FOOTER_FIRST`` bindings (by binding id) come first and the others
follow while they fit. Whatever is left out stays in the command palette (every binding of
the screen is there, see :mod:`srb_tui.ui.commands`) and in the keys panel (``?``, which
every footer shows right after the screen's first two keys).

A user keymap that moves a binding to another key moves it here too: bindings are found by
id, and the key shown is the key they are bound to now.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEYS_ID = "app.keys"  # the app's `?` (the keys panel), kept in every footer
PALETTE_KEY_WIDTH = 12  # "▏^p palette": the palette key docked on the right, with its border


def key_width(key_display: str, description: str) -> int:
    """Cells one footer key takes: `` key `` then ``description `` (Textual's paddings)."""
    return len(key_display) + 2 + (len(description) + 1 if description else 0)


def fit_bindings(
    entries: Sequence[tuple[str, int]], first: Sequence[str], width: int
) -> list[int]:
    """Which of ``entries`` ((binding id, cell width) in the screen's order) to show in
    ``width`` cells: all of them in order when they fit; else those named in ``first``
    (in that order), then the others in order, each only while it still fits whole."""
    if sum(cells for _, cells in entries) <= width:
        return list(range(len(entries)))
    rank = {binding_id: n for n, binding_id in enumerate(first)}
    ordered = sorted(range(len(entries)),
                     key=lambda i: (rank.get(entries[i][0], len(rank)), i))
    chosen: list[int] = []
    used = 0
    for index in ordered:
        cells = entries[index][1]
        if used + cells <= width:  # one that does not fit leaves room for smaller ones
            chosen.append(index)
            used += cells
    return chosen


class PriorityFooter(Footer):
    """Footer that shows the screen's most useful keys first when space runs short."""

    def __init__(self, *, first: Iterable[str] = (), **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        first = tuple(first)
        if KEYS_ID not in first:  # `?` (every key of the screen) right after its first two
            first = (*first[:2], KEYS_ID, *first[2:])
        self.first = first
        self._width = 0
        self._composed_as: tuple[object, ...] | None = None

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)

    def _keys_of(self, screen: Screen[object]) -> tuple[object, ...]:
        """What this footer shows of ``screen``'s bindings now (before fitting them)."""
        return tuple((binding.id or binding.action, self.app.get_key_display(binding),
                      binding.description, enabled, tooltip, binding.show)
                     for _node, binding, enabled, tooltip in screen.active_bindings.values())

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Recompose only when the keys shown changed: moving the focus between widgets
        with the same shown keys (the Run screen's tabs and tables) fired a recompose of
        every key each time (~40 ms of CPU right after a tab's first paint)."""
        if (self._bindings_ready and self._composed_as is not None and self.is_attached
                and screen is self.screen and self._keys_of(screen) == self._composed_as):
            return
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._composed_as = self._keys_of(self.screen)
        active = self.screen.active_bindings
        shown: list[tuple[Binding, bool, str]] = []
        actions: set[str] = set()
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in actions:
                actions.add(binding.action)
                shown.append((binding, enabled, tooltip))
        entries = [(binding.id or binding.action,
                    key_width(self.app.get_key_display(binding), binding.description))
                   for binding, _, _ in shown]
        width = (self.size.width or self.app.size.width) - PALETTE_KEY_WIDTH
        for index in fit_bindings(entries, self.first, width):
            binding, enabled, tooltip = shown[index]
            yield FooterKey(
                binding.key, self.app.get_key_display(binding), binding.description,
                binding.action, disabled=not enabled, tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            palette = active.get(self.app.COMMAND_PALETTE_BINDING)
            if palette is not None:
                _node, binding, enabled, _tooltip = palette
                yield FooterKey(
                    binding.key, self.app.get_key_display(binding), binding.description,
                    binding.action, classes="-command-palette", disabled=not enabled,
                    tooltip=binding.tooltip or binding.description,
                )


__all__ = ["PriorityFooter", "fit_bindings", "key_width"]
