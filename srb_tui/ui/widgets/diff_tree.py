"""DiffTree: the files of a tree comparison as a folder tree, built lazily.

Folders are filled in when first expanded, so a 10,000-file comparison shows its top level
at once; small comparisons (``EAGER_LIMIT`` files or fewer) open fully. Each file shows a
status mark (``+`` added, ``−`` removed, ``~`` changed) and, once the worker has counted
them, its added and removed lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from srb_tui.service.views.diff import FileEntry, FileStatus
from srb_tui.service.views.diff_stats import LineCount
from srb_tui.service.views.safe_read import display_name
from srb_tui.ui.palette import Tone, tone

EAGER_LIMIT = 300
MARK: dict[FileStatus, tuple[str, Tone]] = {
    "added": ("+", "ok"),
    "removed": ("−", "bad"),
    "changed": ("~", "warn"),
    "same": (" ", "muted"),
}


@dataclass
class NodeInfo:
    """What a tree node stands for: a folder (``entry`` None) or a file."""

    path: str
    entry: FileEntry | None = None
    populated: bool = False


class DiffTree(Tree[NodeInfo]):
    """Folders and files of a comparison; ``load`` replaces the content."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("/", data=NodeInfo(""), id=id)
        self.show_root = False
        self.guide_depth = 2
        self._dirs: dict[str, list[str]] = {}
        self._files: dict[str, list[FileEntry]] = {}
        self._differing: dict[str, int] = {}
        self.file_nodes: dict[str, TreeNode[NodeInfo]] = {}
        self.counts: dict[str, LineCount] = {}
        self.shown_files = 0

    # -- content -------------------------------------------------------------------------

    def load(self, entries: Iterable[FileEntry], counts: Mapping[str, LineCount]) -> None:
        """Show ``entries`` (already filtered), folders first, each level sorted."""
        self.counts = dict(counts)
        self._dirs, self._files, self._differing = {"": []}, {"": []}, {}
        seen_dirs: set[str] = {""}
        total = 0
        for entry in entries:
            total += 1
            parent, _, _ = entry.path.rpartition("/")
            self._files.setdefault(parent, []).append(entry)
            folder = parent
            while folder not in seen_dirs:
                seen_dirs.add(folder)
                up, _, _ = folder.rpartition("/")
                self._dirs.setdefault(up, []).append(folder)
                self._dirs.setdefault(folder, [])
                self._files.setdefault(folder, [])
                folder = up
            if entry.status != "same":
                folder = parent
                while True:
                    self._differing[folder] = self._differing.get(folder, 0) + 1
                    if not folder:
                        break
                    folder = folder.rpartition("/")[0]
        for children in self._dirs.values():
            children.sort()
        self.shown_files = total
        self.file_nodes = {}
        self.clear()
        self.root.data = NodeInfo("")
        self._populate(self.root)
        self.root.expand()
        if total <= EAGER_LIMIT:
            self._expand_all(self.root)

    def _expand_all(self, node: TreeNode[NodeInfo]) -> None:
        for child in node.children:
            if child.data is not None and child.data.entry is None:
                self._populate(child)
                child.expand()
                self._expand_all(child)

    def _populate(self, node: TreeNode[NodeInfo]) -> None:
        info = node.data
        if info is None or info.populated:
            return
        info.populated = True
        for folder in self._dirs.get(info.path, []):
            node.add(self.folder_label(folder), data=NodeInfo(folder), allow_expand=True)
        for entry in self._files.get(info.path, []):
            leaf = node.add_leaf(self.file_label(entry), data=NodeInfo(entry.path, entry))
            self.file_nodes[entry.path] = leaf

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeInfo]) -> None:
        self._populate(event.node)

    # -- labels --------------------------------------------------------------------------

    def folder_label(self, folder: str) -> Text:
        name = display_name(folder.rpartition("/")[2]) + "/"
        text = Text(name, style=tone(self.app, "accent"))
        differing = self._differing.get(folder, 0)
        if differing:
            text.append(f"  {differing}", style=tone(self.app, "muted"))
        return text

    def file_label(self, entry: FileEntry) -> Text:
        mark, kind = MARK[entry.status]
        text = Text(f"{mark} ", style=tone(self.app, kind, bold=True))
        shade = tone(self.app, kind) if entry.status != "same" else ""
        text.append(display_name(entry.name), style=shade)
        count = self.counts.get(entry.path)
        if count is not None and entry.status != "same":
            text.append("  ")
            if count.binary:
                text.append("binary", style=tone(self.app, "muted"))
            else:
                text.append(f"+{count.added}", style=tone(self.app, "ok"))
                text.append(" ")
                text.append(f"−{count.removed}", style=tone(self.app, "bad"))
        return text

    def add_counts(self, counts: Iterable[LineCount]) -> None:
        """Record line counts and relabel the files already in the tree."""
        for count in counts:
            self.counts[count.path] = count
            node = self.file_nodes.get(count.path)
            if node is not None and node.data is not None and node.data.entry is not None:
                node.set_label(self.file_label(node.data.entry))

    def relabel(self) -> None:
        """Label every filled node again (after a theme change)."""
        for node in self.file_nodes.values():
            if node.data is not None and node.data.entry is not None:
                node.set_label(self.file_label(node.data.entry))

    # -- navigation ----------------------------------------------------------------------

    def reveal(self, path: str) -> TreeNode[NodeInfo] | None:
        """Open the folders down to ``path`` and put the cursor on its node."""
        node = self.root
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            self._populate(node)
            child = next(
                (c for c in node.children if c.data is not None and c.data.path == folder), None
            )
            if child is None:
                return None
            self._populate(child)
            child.expand()
            node = child
        self._populate(node)
        leaf = self.file_nodes.get(path)
        if leaf is not None:
            self.call_after_refresh(self.move_cursor, leaf)
        return leaf
