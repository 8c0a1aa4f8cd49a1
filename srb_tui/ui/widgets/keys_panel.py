"""The keys panel (`?`): the screen's own keys first, each with one line of text.

Textual's panel lists the focused widget's keys first — a table's cursor and page keys —
so at 80×24 none of a screen's own keys (`R` re-run, `e` export on Counterexamples) were
visible, and it prints a binding's description and its tooltip side by side ("f Follow
Follow the end…"). This one orders the groups screen, focused widgets, app, and shows the
tooltip when there is one, else the description (issue 35 item 3).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import HelpPanel, KeyPanel, Markdown
from textual.widgets._key_panel import BindingsTable

GENERIC = frozenset(
    (b if isinstance(b, Binding) else Binding(*b)).action for b in (*Screen.BINDINGS,
                                                                    *App.BINDINGS))
"""Actions of the bindings every Textual screen and app has (Textual's, not srb's)."""


def _rank(namespace: object) -> int:
    if isinstance(namespace, Screen):
        return 0
    if isinstance(namespace, App):
        return 2
    return 1


class ScreenFirstBindings(BindingsTable):
    """The bindings table of :class:`KeysPanel`."""

    def render_bindings_table(self) -> Table:
        groups: dict[int, list[Any]] = {}
        order: list[DOMNode] = []
        for namespace, binding, enabled, tooltip in self.screen.active_bindings.values():
            if id(namespace) not in groups:
                groups[id(namespace)] = []
                order.append(namespace)
            groups[id(namespace)].append((binding, enabled, tooltip))
        order.sort(key=_rank)  # stable: the focused chain keeps its order
        key_style = self.get_component_rich_style("bindings-table--key")
        text_style = self.get_component_rich_style("bindings-table--description")
        header_style = self.get_component_rich_style("bindings-table--header")
        table = Table(padding=(0, 0), show_header=False, box=box.SIMPLE)
        table.add_column("", justify="right")
        for namespace in order:
            by_action: defaultdict[str, list[Binding]] = defaultdict(list)
            # srb's own keys before Textual's generic ones (focus next/previous, copy)
            found = sorted(groups[id(namespace)], key=lambda item: item[0].action in GENERIC)
            for binding, _enabled, _tooltip in found:
                if not binding.system:
                    by_action[binding.action].append(binding)
            if not by_action:
                continue
            title = getattr(namespace, "BINDING_GROUP_TITLE", None)
            if title:
                table.add_row("", Text(title, style=header_style))
            for bindings in by_action.values():
                keys = " ".join(dict.fromkeys(self.app.get_key_display(b) for b in bindings))
                first = bindings[0]
                words = first.tooltip or first.description  # one text, not both
                table.add_row(Text(keys, style=key_style), Text(words, style=text_style))
            table.add_section()
        return table


class ScreenFirstKeyPanel(KeyPanel):
    def compose(self) -> ComposeResult:
        yield ScreenFirstBindings(shrink=True, expand=False)


class KeysPanel(HelpPanel):
    """Textual's help panel with :class:`ScreenFirstBindings` as its keys."""

    def compose(self) -> ComposeResult:
        yield Markdown(id="widget-help")
        yield ScreenFirstKeyPanel(id="keys-help")
