"""The Store composes its record families; it does not inherit them (issue 34 item 4).

Each family is a repository attribute (``store.runs``, ``store.grading``, ...); the Store
itself keeps only what spans the families: opening, checking and closing the file, and
``run_detail`` (one snapshot read across runs, grading, infra and logs). A mixin base, a
forwarding method or a new method on the Store fails here: it belongs to a family.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest

from srb_tui.store import Store, StoreError
from srb_tui.store.base import Repository

# What the Store keeps, and why each stays on it:
KEPT = {
    "open",  # opens (or shares) the file's connections and writer; builds the families
    "close",  # the last handle's close applies queued writes and closes the connections
    "check_integrity",  # PRAGMA quick_check / integrity_check of the whole file
    "run_detail",  # one consistent snapshot of a run across every family
    "schema_version",  # the open file's user_version
}
FAMILIES = {"runs", "grading", "infra", "logs", "agent", "ledger", "campaigns", "reports",
            "labels", "imports", "strength"}


def _public(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_the_store_has_no_bases_and_only_its_short_list() -> None:
    assert Store.__bases__ == (object,)
    assert _public(Store) == KEPT


def test_every_family_is_a_repository_attribute() -> None:
    hints = typing.get_type_hints(Store)
    assert set(hints) == FAMILIES
    for name, kind in hints.items():
        assert inspect.isclass(kind) and issubclass(kind, Repository), name
        assert not (_public(kind) & KEPT), f"{name} repeats a method the Store keeps"


def test_no_method_name_belongs_to_two_families() -> None:
    # one name, one family: what makes `store.<family>.<method>` unambiguous. strength is
    # reached as store.strength only and may reuse names (campaign, campaigns).
    owner: dict[str, str] = {}
    for name, kind in typing.get_type_hints(Store).items():
        if name == "strength":
            continue
        for method in _public(kind) - {"path"}:
            assert method not in owner, f"{method} is in {owner.get(method)} and {name}"
            owner[method] = name


async def test_the_families_of_an_open_store_share_its_file(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        for name in FAMILIES:
            family = getattr(store, name)
            assert isinstance(family, Repository) and family.path == store.path, name
        run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="a")
        await store.infra.add_event(run.id, "note")
        detail = await store.run_detail(run.id)
        assert [e.kind for e in detail.events] == ["note"]
    # closed: every family stops answering with the store
    with pytest.raises(StoreError, match="the store is closed"):
        await store.runs.get_run(run.id)
    with pytest.raises(StoreError, match="closed"):
        await store.grading.record_checks(run.id, "behavioural", [])
