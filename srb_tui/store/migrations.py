"""Schema migrations by ``PRAGMA user_version``: an ordered list of steps, one transaction each.

Step ``i`` (0-based) takes the schema from version ``i`` to ``i + 1``. Never edit a released
step; append a new one. ``APPLICATION_ID`` marks a file as an srb store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import aiosqlite

from srb_tui.store.schema_v6 import V6_NAME, V6_STATEMENTS
from srb_tui.store.schema_v7 import V7_NAME, V7_STATEMENTS

APPLICATION_ID = 0x53524231  # "SRB1"


class Migration(NamedTuple):
    """One schema step: a name for messages and the statements it runs."""

    name: str
    statements: tuple[str, ...]


_V1 = Migration(
    "initial schema",
    (
        """
        CREATE TABLE runs (
            id                 TEXT PRIMARY KEY,
            task_id            TEXT NOT NULL,
            task_path          TEXT NOT NULL,
            agent              TEXT NOT NULL,
            model              TEXT,
            effort             TEXT,
            budget_sec         REAL,
            status             TEXT NOT NULL,
            phase              TEXT,
            stop_reason        TEXT,
            created_at         TEXT NOT NULL,
            updated_at         TEXT NOT NULL,
            started_at         TEXT,
            finished_at        TEXT,
            valid              INTEGER,
            score              REAL,
            max_score          REAL,
            blocked_by         TEXT,
            harness_error      TEXT,
            notes              TEXT NOT NULL DEFAULT '[]',
            grader_fingerprint TEXT,
            submission_files   INTEGER,
            submission_bytes   INTEGER,
            batch_id           TEXT,
            extra              TEXT NOT NULL DEFAULT '{}'
        )
        """,
        "CREATE INDEX runs_by_created ON runs (created_at, id)",
        "CREATE INDEX runs_by_task ON runs (task_id, created_at)",
        "CREATE INDEX runs_by_status ON runs (status, created_at)",
        "CREATE INDEX runs_by_batch ON runs (batch_id) WHERE batch_id IS NOT NULL",
        """
        CREATE TABLE run_transitions (
            id          INTEGER PRIMARY KEY,
            run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            from_status TEXT,
            to_status   TEXT NOT NULL,
            at          TEXT NOT NULL,
            reason      TEXT
        )
        """,
        "CREATE INDEX run_transitions_by_run ON run_transitions (run_id, id)",
        """
        CREATE TABLE stage_results (
            run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            stage        TEXT NOT NULL,
            status       TEXT NOT NULL,
            started_at   TEXT,
            duration_sec REAL,
            fingerprint  TEXT,
            result       TEXT NOT NULL DEFAULT 'null',
            recorded_at  TEXT NOT NULL,
            PRIMARY KEY (run_id, stage)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE module_results (
            run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            stage        TEXT NOT NULL,
            module_id    TEXT NOT NULL,
            position     INTEGER NOT NULL,
            title        TEXT,
            weight       REAL,
            status       TEXT NOT NULL,
            rate         REAL,
            passed       INTEGER NOT NULL DEFAULT 0,
            failed       INTEGER NOT NULL DEFAULT 0,
            skipped      INTEGER NOT NULL DEFAULT 0,
            errors       INTEGER NOT NULL DEFAULT 0,
            scored       INTEGER NOT NULL DEFAULT 0,
            duration_sec REAL,
            detail       TEXT NOT NULL DEFAULT 'null',
            PRIMARY KEY (run_id, stage, module_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE checks (
            run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            stage     TEXT NOT NULL,
            module_id TEXT NOT NULL DEFAULT '',
            position  INTEGER NOT NULL,
            check_id  TEXT NOT NULL,
            verdict   TEXT NOT NULL,
            weight    REAL,
            summary   TEXT,
            detail    TEXT NOT NULL DEFAULT 'null',
            evidence  TEXT NOT NULL DEFAULT 'null',
            PRIMARY KEY (run_id, stage, module_id, position)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE gate_votes (
            run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            gate_id    TEXT NOT NULL,
            sample     INTEGER NOT NULL,
            verdict    TEXT NOT NULL,
            confidence REAL,
            reasoning  TEXT,
            evidence   TEXT NOT NULL DEFAULT 'null',
            downgraded INTEGER NOT NULL DEFAULT 0,
            extra      TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, gate_id, sample)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE gate_outcomes (
            run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            gate_id     TEXT NOT NULL,
            title       TEXT,
            required    INTEGER NOT NULL DEFAULT 1,
            verdict     TEXT NOT NULL,
            votes_pass  INTEGER NOT NULL DEFAULT 0,
            votes_fail  INTEGER NOT NULL DEFAULT 0,
            votes_error INTEGER NOT NULL DEFAULT 0,
            tie         INTEGER NOT NULL DEFAULT 0,
            extra       TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, gate_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE adversary_rounds (
            run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            adversary_id TEXT NOT NULL,
            model        TEXT,
            driver       TEXT,
            focus        TEXT,
            status       TEXT NOT NULL,
            started_at   TEXT,
            duration_sec REAL,
            candidates   INTEGER,
            notes        TEXT NOT NULL DEFAULT '[]',
            extra        TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, adversary_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE counterexamples (
            id           INTEGER PRIMARY KEY,
            run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            adversary_id TEXT NOT NULL,
            created_at   TEXT NOT NULL,
            code         TEXT NOT NULL,
            verdict      TEXT NOT NULL,
            reason       TEXT,
            output_a     TEXT NOT NULL DEFAULT 'null',
            output_b     TEXT NOT NULL DEFAULT 'null',
            exit_a       INTEGER,
            exit_b       INTEGER,
            duration_a   REAL,
            duration_b   REAL,
            extra        TEXT NOT NULL DEFAULT '{}'
        )
        """,
        "CREATE INDEX counterexamples_by_run ON counterexamples (run_id, adversary_id, id)",
        """
        CREATE TABLE images (
            run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            role        TEXT NOT NULL,
            tag         TEXT NOT NULL,
            image_id    TEXT,
            digest      TEXT,
            recorded_at TEXT NOT NULL,
            PRIMARY KEY (run_id, role)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE containers (
            container_id TEXT PRIMARY KEY,
            run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            role         TEXT NOT NULL,
            name         TEXT NOT NULL,
            created_at   TEXT NOT NULL,
            last_log_ts  TEXT,
            exit_code    INTEGER,
            removed_at   TEXT
        )
        """,
        "CREATE INDEX containers_by_run ON containers (run_id, created_at)",
        """
        CREATE TABLE events (
            seq     INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id  TEXT REFERENCES runs (id) ON DELETE CASCADE,
            at      TEXT NOT NULL,
            kind    TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT 'null'
        )
        """,
        "CREATE INDEX events_by_run ON events (run_id, seq)",
        """
        CREATE TABLE log_lines (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            seq    INTEGER NOT NULL,
            ts     TEXT NOT NULL,
            stream TEXT NOT NULL,
            text   TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID
        """,
    ),
)

_V2 = Migration(
    "model gateway: tokens, budgets, ledger, probes",
    (
        """
        CREATE TABLE gateway_tokens (
            token_hash TEXT PRIMARY KEY,
            run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            role       TEXT NOT NULL,
            round      INTEGER,
            issued_at  TEXT NOT NULL,
            revoked_at TEXT
        ) WITHOUT ROWID
        """,
        "CREATE INDEX gateway_tokens_by_run ON gateway_tokens (run_id)",
        """
        CREATE TABLE run_budgets (
            run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
            max_cost_usd REAL,
            max_tokens   INTEGER,
            set_at       TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE ledger (
            id                 INTEGER PRIMARY KEY,
            run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            role               TEXT NOT NULL,
            round              INTEGER,
            route              TEXT NOT NULL,
            model              TEXT,
            upstream_model     TEXT,
            status             INTEGER NOT NULL,
            latency_ms         REAL NOT NULL,
            streamed           INTEGER NOT NULL DEFAULT 0,
            input_tokens       INTEGER NOT NULL DEFAULT 0,
            output_tokens      INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
            cost_usd           REAL,
            error              TEXT,
            at                 TEXT NOT NULL
        )
        """,
        "CREATE INDEX ledger_by_run ON ledger (run_id, id)",
        """
        CREATE TABLE gateway_probes (
            run_id   TEXT NOT NULL DEFAULT '',
            method   TEXT NOT NULL,
            path     TEXT NOT NULL,
            status   INTEGER NOT NULL,
            count    INTEGER NOT NULL,
            first_at TEXT NOT NULL,
            last_at  TEXT NOT NULL,
            PRIMARY KEY (run_id, method, path)
        ) WITHOUT ROWID
        """,
    ),
)

_V3 = Migration(
    "agent rounds and transcript events",
    (
        """
        CREATE TABLE agent_rounds (
            run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            round              INTEGER NOT NULL,
            prompt_kind        TEXT NOT NULL,
            started_at         TEXT NOT NULL,
            ended_at           TEXT,
            exit_code          INTEGER,
            first_log_seq      INTEGER NOT NULL DEFAULT 0,
            session_id         TEXT,
            final_message      TEXT,
            tree_before        TEXT,
            tree_after         TEXT,
            acted              INTEGER,
            failed             INTEGER,
            error              TEXT,
            input_tokens       INTEGER NOT NULL DEFAULT 0,
            output_tokens      INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
            client_cost_usd    REAL,
            verdict            TEXT,
            PRIMARY KEY (run_id, round)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE agent_events (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            round  INTEGER NOT NULL,
            seq    INTEGER NOT NULL,
            ts     TEXT NOT NULL,
            kind   TEXT NOT NULL,
            data   TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, round, seq)
        ) WITHOUT ROWID
        """,
    ),
)

V6_CAMPAIGNS = Migration(V6_NAME, V6_STATEMENTS)

V7_STRENGTH = Migration(V7_NAME, V7_STATEMENTS)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, V6_CAMPAIGNS, V7_STRENGTH)
SCHEMA_VERSION = len(MIGRATIONS)


async def apply_migrations(
    conn: aiosqlite.Connection, current: int, steps: Sequence[Migration] = MIGRATIONS
) -> int:
    """Apply ``steps[current:]`` in order, each in its own transaction; return the new version.

    Each step re-reads ``user_version`` under the write lock, so two processes opening a new
    store at once do not both create it.

    ``conn`` must be in autocommit mode (``isolation_level=None``). A failing step is rolled
    back whole and re-raised; earlier steps stay applied.
    """
    version = current
    while version < len(steps):
        step = steps[version]
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # Another srb process may have migrated between our read and this lock.
            rows = list(await conn.execute_fetchall("PRAGMA user_version"))
            on_disk = int(rows[0][0])
            if on_disk > version:
                await conn.execute("COMMIT")
                version = on_disk
                continue
            for statement in step.statements:
                await conn.execute(statement)
            # PRAGMA takes no parameters; the value is an int we computed.
            await conn.execute(f"PRAGMA user_version = {int(version + 1)}")
            if version == 0:
                await conn.execute(f"PRAGMA application_id = {int(APPLICATION_ID)}")
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        version += 1
    return version
