"""tree_manifest / content_digest / compare_trees: identity of a tree by content."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from srb_tui.sources import compare_trees, content_digest, tree_manifest


def build(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_manifest_is_sorted_with_sizes_hashes_and_link_targets(tmp_path: Path) -> None:
    root = build(tmp_path / "t", {"b.txt": b"bee", "a/z.py": b"", "a/y.py": b"yy"})
    os.symlink("a/y.py", root / "link")
    (root / "empty-dir").mkdir()
    assert tree_manifest(root) == [
        ("a/y.py", 2, hashlib.sha256(b"yy").hexdigest()),
        ("a/z.py", 0, hashlib.sha256(b"").hexdigest()),
        ("b.txt", 3, hashlib.sha256(b"bee").hexdigest()),
        ("link", 6, "symlink:a/y.py"),
    ]


def test_digest_depends_on_content_not_on_mtime_or_mode(tmp_path: Path) -> None:
    one = build(tmp_path / "one", {"x": b"1", "d/y": b"2"})
    two = build(tmp_path / "two", {"d/y": b"2", "x": b"1"})
    os.utime(two / "x", (1, 1))
    (two / "x").chmod(0o755)
    assert content_digest(tree_manifest(one)) == content_digest(tree_manifest(two))
    (two / "x").write_bytes(b"3")
    assert content_digest(tree_manifest(one)) != content_digest(tree_manifest(two))


def test_digest_distinguishes_link_from_file_and_renames(tmp_path: Path) -> None:
    files = build(tmp_path / "f", {"a": b"target", "b": b"target"})
    links = build(tmp_path / "l", {"a": b"target"})
    os.symlink("a", links / "b")
    renamed = build(tmp_path / "r", {"a": b"target", "c": b"target"})
    digests = {content_digest(tree_manifest(p)) for p in (files, links, renamed)}
    assert len(digests) == 3


def test_digest_has_a_fixed_canonical_form() -> None:
    manifest = [("b", 1, "x"), ("a", 2, "y")]
    expected = hashlib.sha256(b'srb-tree-manifest/1\n["a",2,"y"]\n["b",1,"x"]\n').hexdigest()
    assert content_digest(manifest) == expected


def test_compare_trees(tmp_path: Path) -> None:
    a = build(tmp_path / "a", {"same": b"s", "gone": b"g", "edit": b"1", "sub/k": b"k"})
    b = build(tmp_path / "b", {"same": b"s", "new": b"n", "edit": b"2", "sub/k": b"k"})
    diff = compare_trees(a, b)
    assert (diff.added, diff.removed, diff.changed) == (("new",), ("gone",), ("edit",))
    assert not diff.identical
    assert compare_trees(a, a).identical
