"""srb's store: aiosqlite over ``state/srb.sqlite3`` (WAL, one writer task, versioned schema).

Open it with ``store = await Store.open(path)`` (or ``async with await Store.open(path)``);
every record comes back as a frozen dataclass with ``to_json()``.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.store.clock import docker_ts_ns, new_run_id, utc_now
    from srb_tui.store.errors import (
        ContentRefused,
        IllegalTransition,
        RunNotFound,
        StoreError,
    )
    from srb_tui.store.grading_records import (
        AdversaryRoundRecord,
        CheckRecord,
        CounterexampleRecord,
        GateOutcomeRecord,
        GateVoteRecord,
        ModuleResultRecord,
        RunDetail,
        StageResultRecord,
    )
    from srb_tui.store.ledger_records import LedgerRow, LedgerTotals, Totals
    from srb_tui.store.lifecycle import (
        FINAL_STATUSES,
        RUN_STATUSES,
        RunStatus,
        is_final,
        is_legal,
        next_statuses,
    )
    from srb_tui.store.logs import LogDeduper
    from srb_tui.store.migrations import MIGRATIONS, SCHEMA_VERSION, Migration
    from srb_tui.store.records import (
        ContainerRecord,
        EventRecord,
        ImageRecord,
        LogEntry,
        LogLine,
        LogResumePoint,
        RunRecord,
        TransitionRecord,
    )
    from srb_tui.store.run_sql import RUN_SORT_KEYS, UPDATABLE_RUN_FIELDS
    from srb_tui.store.store import Store

__all__ = [
    "FINAL_STATUSES",
    "MIGRATIONS",
    "RUN_SORT_KEYS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "UPDATABLE_RUN_FIELDS",
    "AdversaryRoundRecord",
    "CheckRecord",
    "ContainerRecord",
    "ContentRefused",
    "CounterexampleRecord",
    "EventRecord",
    "GateOutcomeRecord",
    "GateVoteRecord",
    "IllegalTransition",
    "ImageRecord",
    "LedgerRow",
    "LedgerTotals",
    "LogDeduper",
    "LogEntry",
    "LogLine",
    "LogResumePoint",
    "Migration",
    "ModuleResultRecord",
    "RunDetail",
    "RunNotFound",
    "RunRecord",
    "RunStatus",
    "StageResultRecord",
    "Store",
    "StoreError",
    "Totals",
    "TransitionRecord",
    "docker_ts_ns",
    "is_final",
    "is_legal",
    "new_run_id",
    "next_statuses",
    "utc_now",
]

__getattr__ = exports_on_first_use(__name__)
