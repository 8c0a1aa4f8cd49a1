"""``sync_rows`` (a table kept equal to a list of rows by key) and the footer that recomposes
only when the keys it shows change, in a real Textual app."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets._footer import FooterKey

from srb_tui.ui.widgets.footer import PriorityFooter
from srb_tui.ui.widgets.run_tables import Row, add_columns, selected_key, sync_rows


def keys_of(table: DataTable[Any]) -> list[str]:
    return [str(table.coordinate_to_cell_key(Coordinate(n, 0)).row_key.value)
            for n in range(table.row_count)]


class Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(id="one", cursor_type="row")
        yield DataTable(id="two", cursor_type="row")
        yield Marked(id="marked", cursor_type="row")
        yield PriorityFooter()


class Marked(DataTable[Any]):
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("m", "mark", "Mark", id="marked.mark")]


def module_rows(module: str, count: int) -> list[Row]:
    return [(f"{module}:{n}", [f"{module}-{n:05d}", "fail"]) for n in range(count)]


async def test_another_modules_rows_replace_the_table_in_order() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        table = app.query_one("#one", DataTable)
        add_columns(table, [("Check", "check"), ("Verdict", "verdict")])
        sync_rows(table, module_rows("m01", 150))
        table.move_cursor(row=40)
        await pilot.pause()
        assert selected_key(table) == "m01:40"
        sync_rows(table, module_rows("m02", 3))  # no key in common: cleared in one step
        await pilot.pause()
        assert keys_of(table) == ["m02:0", "m02:1", "m02:2"]
        assert table.get_row_at(2) == ["m02-00002", "fail"]
        assert selected_key(table) == "m02:0"
        # a list sharing keys keeps the shared rows and their cells updated in place
        sync_rows(table, [("m02:1", ["m02-00001", "pass"]), ("m02:7", ["m02-00007", "fail"])])
        await pilot.pause()
        assert keys_of(table) == ["m02:1", "m02:7"]
        assert table.get_row("m02:1") == ["m02-00001", "pass"]
        sync_rows(table, [])
        assert table.row_count == 0


async def test_footer_recomposes_only_when_its_keys_change() -> None:
    app = Tables()
    async with app.run_test(size=(100, 20)) as pilot:
        app.query_one("#one", DataTable).focus()
        await pilot.pause()
        footer = app.query_one(PriorityFooter)
        before = list(footer.query(FooterKey))
        app.query_one("#two", DataTable).focus()  # same keys shown: nothing rebuilt
        await pilot.pause()
        assert list(footer.query(FooterKey)) == before
        app.query_one("#marked", DataTable).focus()  # a new key: the footer shows it
        await pilot.pause()
        assert "Mark" in [key.description for key in footer.query(FooterKey)]
        app.query_one("#one", DataTable).focus()
        await pilot.pause()
        assert "Mark" not in [key.description for key in footer.query(FooterKey)]
