"""State A acquisition: fetch, verify, extract and cache a task's original tree.

Stdlib only (urllib, hashlib, tarfile, zipfile, git through subprocess).
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.sources.errors import StateAError, UnsafeArchiveError
    from srb_tui.sources.extract import safe_extract
    from srb_tui.sources.manifest import (
        ManifestEntry,
        TreeDiff,
        compare_manifests,
        compare_trees,
        content_digest,
        tree_manifest,
    )
    from srb_tui.sources.prepare import PreparedStateA, prepare_state_a

__all__ = [
    "ManifestEntry",
    "PreparedStateA",
    "StateAError",
    "TreeDiff",
    "UnsafeArchiveError",
    "compare_manifests",
    "compare_trees",
    "content_digest",
    "prepare_state_a",
    "safe_extract",
    "tree_manifest",
]

__getattr__ = exports_on_first_use(__name__)
