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


def test_same_id_under_two_roots_resolves_to_the_first_root_named(tmp_path: Path) -> None:
    # Two roots hold a directory of the same name: the catalogue and find_task both pick
    # the copy in the root named first (issue 26.1), and the catalogue names the other.
    early, late = tmp_path / "a-root", tmp_path / "b-root"
    _copy_manifest(TASKS / DEMO, early / DEMO)
    _copy_manifest(TASKS / DEMO, late / DEMO)
    for roots in ([late, early], [early, late]):
        found = find_task(roots, DEMO)
        catalog = load_catalog(roots)
        assert found is not None
        assert found.path == catalog.find(DEMO).path == roots[0] / DEMO  # type: ignore[union-attr]
        assert catalog.ids() == [DEMO]
        assert [d.ignored for d in catalog.duplicates] == [(roots[1] / DEMO,)]


def test_a_root_that_is_the_task_itself_and_unknown_ids(tmp_path: Path) -> None:
    single = tmp_path / DEMO
    _copy_manifest(TASKS / DEMO, single)
    found = find_task([single], DEMO)
    assert found is not None and found.path == single
    assert find_task([single, TASKS], "no-such-task") is None
    assert find_task([TASKS], "../tasks") is None
