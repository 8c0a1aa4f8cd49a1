"""``find_task`` (a launch loads only its task) finds what the whole catalogue finds."""

from __future__ import annotations

import shutil
from pathlib import Path

from srb_tui.service.catalog import find_task, load_catalog

TASKS = Path(__file__).resolve().parents[2] / "tasks"
DEMO = "demo01-csvtab-python-to-node"


def _copy_manifest(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True)
    shutil.copy(src / "task.toml", dst / "task.toml")


def test_every_catalogued_task_is_found_as_the_catalogue_finds_it() -> None:
    catalog = load_catalog([TASKS])
    assert catalog.ids(), "the repository's tasks/ folder holds tasks"
    for task_id in catalog.ids():
        found = find_task([TASKS], task_id)
        expected = catalog.find(task_id)
        assert found is not None and expected is not None
        assert (found.path, found.task_id, found.ok) == (expected.path, expected.task_id,
                                                         expected.ok)


def test_same_id_under_two_roots_resolves_in_discovery_order(tmp_path: Path) -> None:
    # Two roots hold a directory of the same name: the catalogue picks the first in
    # discovery (sorted path) order, whichever root was named first.
    early, late = tmp_path / "a-root", tmp_path / "b-root"
    _copy_manifest(TASKS / DEMO, early / DEMO)
    _copy_manifest(TASKS / DEMO, late / DEMO)
    for roots in ([late, early], [early, late]):
        found = find_task(roots, DEMO)
        assert found is not None
        assert found.path == load_catalog(roots).find(DEMO).path == early / DEMO  # type: ignore[union-attr]


def test_a_root_that_is_the_task_itself_and_unknown_ids(tmp_path: Path) -> None:
    single = tmp_path / DEMO
    _copy_manifest(TASKS / DEMO, single)
    found = find_task([single], DEMO)
    assert found is not None and found.path == single
    assert find_task([single, TASKS], "no-such-task") is None
    assert find_task([TASKS], "../tasks") is None
