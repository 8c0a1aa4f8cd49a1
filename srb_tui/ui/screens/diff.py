"""Diff screen: State A ↔ submission of a run (or any two folders), file by file.

Left: a search bar, the tree of added/removed/changed files (with +/- line counts filled in
by a worker as they are counted) and the lines of code per language before and after.
Right: the selected file's diff, unified or side by side, with a hunk cursor. The trees are
listed and compared in a worker; a file is diffed only when it is opened.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static, Tree

from srb_tui.config import Settings
from srb_tui.service.views.diff import (
    DiffSourceError,
    FileStatus,
    TreeComparison,
    compare_trees,
    trees_for_run,
)
from srb_tui.service.views.diff_files import file_diff
from srb_tui.service.views.diff_stats import (
    LanguageLines,
    LineCount,
    SearchResult,
    iter_line_counts,
    language_table,
    search,
)
from srb_tui.service.views.display import display_path
from srb_tui.store import Store
from srb_tui.ui.console_service import ConsoleError
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.diff_tree import DiffTree, NodeInfo
from srb_tui.ui.widgets.diff_view import DiffView, PreparedDiff, prepare_diff
from srb_tui.ui.widgets.footer import PriorityFooter

# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("diff.back", "diff.next_hunk", "diff.layout", "diff.only_changed", "diff.search")


class TreesCompared(Message):
    def __init__(self, comparison: TreeComparison) -> None:
        super().__init__()
        self.comparison = comparison


class DiffProblem(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class CountsArrived(Message):
    def __init__(self, counts: list[LineCount]) -> None:
        super().__init__()
        self.counts = counts


class LanguagesCounted(Message):
    def __init__(self, rows: list[LanguageLines]) -> None:
        super().__init__()
        self.rows = rows


class FileReady(Message):
    def __init__(self, prepared: PreparedDiff) -> None:
        super().__init__()
        self.prepared = prepared


class SearchDone(Message):
    def __init__(self, result: SearchResult) -> None:
        super().__init__()
        self.result = result


class DiffScreen(Screen[None]):
    """Two trees side by side: pushed with a run id, or with two folders."""

    AUTO_FOCUS = "#diff-tree"
    BINDINGS = [
        Binding("escape", "back", "Back", id="diff.back", tooltip="Close the diff"),
        Binding("u", "toggle_layout", "Unified/split", id="diff.layout",
                tooltip="Switch between a unified and a side-by-side diff"),
        Binding("n,right_square_bracket", "next_hunk", "Next hunk", id="diff.next_hunk",
                tooltip="Move to the next hunk of the open file"),
        Binding("N,left_square_bracket", "previous_hunk", "Prev hunk", id="diff.prev_hunk",
                tooltip="Move to the previous hunk of the open file"),
        Binding("o", "toggle_changed", "Only changed", id="diff.only_changed",
                tooltip="Show only added, removed and changed files, or every file"),
        Binding("slash", "focus_search", "Search", id="diff.search",
                tooltip="Search file names and contents of both trees"),
        Binding("tab", "app.focus_next", "Focus", show=False, id="diff.focus"),
    ]

    def __init__(
        self,
        run_id: str | None = None,
        *,
        settings: Settings | None = None,
        left: Path | None = None,
        right: Path | None = None,
    ) -> None:
        super().__init__()
        if run_id is None and (left is None or right is None):
            raise ValueError("DiffScreen needs a run id or two folders")
        if run_id is not None and settings is None:
            raise ValueError("DiffScreen needs the settings to find a run's trees")
        self.run_id = run_id
        self.settings = settings
        self.left = left
        self.right = right
        self.comparison: TreeComparison | None = None
        self.problem: str | None = None  # why there is nothing to compare, once known
        self.only_changed = True
        self.matches: frozenset[str] | None = None
        self.counts: dict[str, LineCount] = {}
        self.open_path: str | None = None
        self.tree_shown = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Comparing…", id="diff-summary")
        with Horizontal(id="diff-body"):
            with Vertical(id="diff-side"):
                yield Input(placeholder="search names and text  (press /)", id="diff-search",
                            compact=True)
                yield Static(id="diff-search-status")
                yield DiffTree(id="diff-tree")
                yield DataTable(id="diff-languages", cursor_type="none", show_cursor=False)
            with Vertical(id="diff-main"):
                yield Static("Select a file to see its diff.", id="diff-file")
                yield DiffView(id="diff-view")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = f"Diff · {self.run_id}" if self.run_id else "Diff"
        table = self.query_one("#diff-languages", DataTable)
        # Fixed widths: the rows arrive from a worker, and auto-sized columns would paint
        # at whatever width the first rows gave them.
        for label, width in (("Language", 12), ("State A", 9), ("Submission", 10)):
            table.add_column(label, key=label.lower(), width=width)
        self.query_one("#diff-search-status", Static).display = False
        self._compare()
        self.watch(self.app, "theme", self._retheme, init=False)

    def _retheme(self) -> None:
        self.query_one(DiffTree).relabel()
        self.query_one(DiffView).retheme()
        if self.open_path is not None:
            self._open(self.open_path)

    # -- comparing -------------------------------------------------------------------------

    @work(exclusive=True, group="diff-compare")
    async def _compare(self) -> None:
        try:
            if self.run_id is not None and self.settings is not None:
                self.left, self.right = await trees_for_run(
                    self.settings, self.run_id, await self._store())
            assert self.left is not None and self.right is not None
            comparison = await asyncio.to_thread(compare_trees, self.left, self.right)
        except DiffSourceError as exc:
            self.post_message(DiffProblem(str(exc)))
            return
        self.post_message(TreesCompared(comparison))

    async def _store(self) -> Store | None:
        """The console's own store (one per process per file), when it has one."""
        host = getattr(self.app, "run_host", None)
        if host is None or self.settings is None or not self.settings.db_path.exists():
            return None
        try:
            return cast("Store", await host.store())
        except ConsoleError as exc:
            raise DiffSourceError(str(exc)) from exc

    def on_diff_problem(self, message: DiffProblem) -> None:
        self.problem = message.text
        summary = self.query_one("#diff-summary", Static)
        summary.update(Text(message.text, style=tone(self.app, "bad")))

    def on_trees_compared(self, message: TreesCompared) -> None:
        self.comparison = message.comparison
        self._show_summary()
        self._fill_tree()
        self.tree_shown = True
        # Counting reads every file again: start it once the tree has been painted.
        self.call_after_refresh(self._count)

    def _show_summary(self) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        text = Text()
        left, right = display_path(comparison.left), display_path(comparison.right)
        room = max(12, (self.size.width - 2 - len("State A   ↔  submission ")) // 2)
        text.append("State A ", style=tone(self.app, "muted"))
        text.append(path_tail(left, room + max(0, room - len(right))))
        text.append("  ↔  ", style=tone(self.app, "accent", bold=True))
        text.append("submission ", style=tone(self.app, "muted"))
        text.append(path_tail(right, room + max(0, room - len(left))))
        text.append("\n")
        shown: tuple[tuple[FileStatus, Tone], ...] = (
            ("changed", "warn"), ("added", "ok"), ("removed", "bad"))
        for status, kind in shown:
            text.append(f"{comparison.count(status)} {status}", style=tone(self.app, kind))
            text.append(" · ")
        text.append(f"{comparison.count('same')} same", style=tone(self.app, "muted"))
        text.append("   ·   showing " + ("changed files" if self.only_changed else "all files"),
                    style=tone(self.app, "muted"))
        self.query_one("#diff-summary", Static).update(text)

    def on_resize(self) -> None:
        self._show_summary()

    def _visible_entries(self) -> list[object]:
        assert self.comparison is not None
        if self.matches is not None:  # a search looks at every file, changed or not
            return [e for e in self.comparison.entries if e.path in self.matches]
        return [e for e in self.comparison.entries if not self.only_changed or e.status != "same"]

    def _fill_tree(self) -> None:
        if self.comparison is None:
            return
        tree = self.query_one(DiffTree)
        tree.load(self._visible_entries(), self.counts)  # type: ignore[arg-type]

    # Workers read self.comparison rather than take it as an argument: a worker's
    # description is the repr of its arguments, and that of 10,000 entries is not free.
    @work(thread=True, exclusive=True, group="diff-count")
    def _count(self) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        for batch in iter_line_counts(comparison):
            self.post_message(CountsArrived(batch))
        self.post_message(LanguagesCounted(language_table(comparison)))

    def on_counts_arrived(self, message: CountsArrived) -> None:
        for count in message.counts:
            self.counts[count.path] = count
        self.query_one(DiffTree).add_counts(message.counts)

    def on_languages_counted(self, message: LanguagesCounted) -> None:
        table = self.query_one("#diff-languages", DataTable)
        table.clear()
        for row in message.rows:
            before = f"{row.lines_a:,}" if row.files_a else "—"
            after = f"{row.lines_b:,}" if row.files_b else "—"
            kind: Tone = "ok" if row.lines_b > row.lines_a else \
                "bad" if row.lines_b < row.lines_a else "muted"
            table.add_row(
                row.language, Text(before, justify="right"),
                Text(after, style=tone(self.app, kind), justify="right"), key=row.language,
            )

    # -- opening a file --------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#diff-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[NodeInfo]) -> None:
        info = event.node.data
        if info is not None and info.entry is not None and info.path != self.open_path:
            self._open(info.path)

    @on(Tree.NodeSelected, "#diff-tree")
    def _selected(self, event: Tree.NodeSelected[NodeInfo]) -> None:
        info = event.node.data
        if info is not None and info.entry is not None:
            self.query_one(DiffView).focus()

    def _open(self, path: str) -> None:
        self.open_path = path
        self._diff_file(path, self.app.current_theme.dark)

    @work(thread=True, exclusive=True, group="diff-file")
    def _diff_file(self, path: str, dark: bool) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        diff = file_diff(comparison.left, comparison.right, path)
        self.post_message(FileReady(prepare_diff(diff, dark)))

    def on_file_ready(self, message: FileReady) -> None:
        if message.prepared.diff.path != self.open_path:
            return
        self.query_one(DiffView).show(message.prepared)

    @on(DiffView.HunkMoved)
    def _hunk_moved(self, message: DiffView.HunkMoved) -> None:
        self._show_file_heading(message.index, message.count)

    def _show_file_heading(self, index: int, count: int) -> None:
        view = self.query_one(DiffView)
        if view.prepared is None or self.comparison is None:
            return
        diff = view.prepared.diff
        entry = self.comparison.get(diff.path)
        text = Text(diff.path, style="bold")
        if entry is not None:
            text.append(f" · {entry.status}", style=tone(self.app, "muted"))
        if diff.hunks:
            text.append(f" · +{diff.added} −{diff.removed}", style=tone(self.app, "muted"))
            text.append(f" · hunk {index + 1}/{count}", style=tone(self.app, "accent"))
        text.append(f" · {view.layout_mode}", style=tone(self.app, "muted"))
        self.query_one("#diff-file", Static).update(text)

    # -- actions ---------------------------------------------------------------------------

    def action_back(self) -> None:
        search = self.query_one("#diff-search", Input)
        if search.has_focus and search.value:
            search.value = ""
            self._apply_search(None)
            self.query_one(DiffTree).focus()
            return
        self.app.pop_screen()

    def action_toggle_layout(self) -> None:
        view = self.query_one(DiffView)
        view.layout_mode = "split" if view.layout_mode == "unified" else "unified"
        self._show_file_heading(view.current_hunk, len(view.hunk_rows))

    def action_next_hunk(self) -> None:
        if not self.query_one(DiffView).next_hunk():
            self.notify("No further hunk in this file", timeout=2)

    def action_previous_hunk(self) -> None:
        if not self.query_one(DiffView).previous_hunk():
            self.notify("This is the first hunk", timeout=2)

    def action_toggle_changed(self) -> None:
        self.only_changed = not self.only_changed
        self._show_summary()
        self._fill_tree()

    def action_focus_search(self) -> None:
        self.query_one("#diff-search", Input).focus()

    # -- searching -------------------------------------------------------------------------

    @on(Input.Submitted, "#diff-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        needle = event.value.strip()
        if not needle:
            self._apply_search(None)
            return
        if self.comparison is not None:
            self._search(needle)

    @work(thread=True, exclusive=True, group="diff-search")
    def _search(self, needle: str) -> None:
        comparison = self.comparison
        if comparison is not None:
            self.post_message(SearchDone(search(comparison, needle)))

    def on_search_done(self, message: SearchDone) -> None:
        self._apply_search(message.result)
        self.query_one(DiffTree).focus()

    def _apply_search(self, result: SearchResult | None) -> None:
        status = self.query_one("#diff-search-status", Static)
        if result is None:
            self.matches = None
            status.display = False
        else:
            self.matches = result.paths
            lines = sum(1 for hit in result.hits if hit.line is not None)
            more = "+" if result.truncated else ""
            status.update(
                Text(
                    f"{len(result.paths)} files match {result.needle!r} "
                    f"({lines}{more} lines)  esc clears",
                    style=tone(self.app, "accent" if result.paths else "warn"),
                )
            )
            status.display = True
        self._fill_tree()


def path_tail(path: str, room: int) -> str:
    """``path`` in at most ``room`` characters: its end, after "…", when it is longer."""
    return path if len(path) <= room else "…" + path[len(path) - room + 1:]
