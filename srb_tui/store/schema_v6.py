"""The V6 schema step's statements (campaigns, cells and retries; human labels; imported
runs; an index of events by kind so the reports read every run's latest ``score`` event in one
query). Plain text only, so ``migrations`` can import it without a cycle."""

from __future__ import annotations

V6_NAME = "campaigns, cells and retries; human labels; imported runs; events by kind"
V6_STATEMENTS: tuple[str, ...] = (
    """
        CREATE TABLE campaigns (
            id           TEXT PRIMARY KEY,
            file         TEXT,
            source       TEXT NOT NULL,
            status       TEXT NOT NULL,
            max_parallel INTEGER NOT NULL,
            retry_limit  INTEGER NOT NULL,
            max_cost     REAL,
            created_at   TEXT NOT NULL,
            updated_at   TEXT NOT NULL,
            extra        TEXT NOT NULL DEFAULT '{}'
        )
        """,
        """
        CREATE TABLE campaign_configs (
            campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
            position    INTEGER NOT NULL,
            label       TEXT NOT NULL,
            agent       TEXT NOT NULL,
            model       TEXT,
            effort      TEXT,
            max_cost    REAL,
            PRIMARY KEY (campaign_id, label)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE campaign_cells (
            campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
            task_id     TEXT NOT NULL,
            config      TEXT NOT NULL,
            repeat      INTEGER NOT NULL,
            position    INTEGER NOT NULL,
            task_path   TEXT NOT NULL,
            state       TEXT NOT NULL,
            run_id      TEXT REFERENCES runs (id) ON DELETE SET NULL,
            attempts    INTEGER NOT NULL DEFAULT 0,
            updated_at  TEXT NOT NULL,
            PRIMARY KEY (campaign_id, task_id, config, repeat)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX campaign_cells_by_run ON campaign_cells (run_id) WHERE run_id IS NOT NULL",
        """
        CREATE TABLE cell_attempts (
            id          INTEGER PRIMARY KEY,
            campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
            task_id     TEXT NOT NULL,
            config      TEXT NOT NULL,
            repeat      INTEGER NOT NULL,
            attempt     INTEGER NOT NULL,
            run_id      TEXT,
            outcome     TEXT,
            reason      TEXT,
            started_at  TEXT NOT NULL,
            ended_at    TEXT
        )
        """,
        "CREATE INDEX cell_attempts_by_cell"
        " ON cell_attempts (campaign_id, task_id, config, repeat)",
        """
        CREATE TABLE human_labels (
            run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            annotator   TEXT NOT NULL,
            genuine     INTEGER NOT NULL,
            source      TEXT,
            imported_at TEXT NOT NULL,
            PRIMARY KEY (run_id, annotator)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE imported_runs (
            run_id      TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
            source_dir  TEXT NOT NULL,
            job         TEXT,
            category    TEXT,
            cost_usd    REAL,
            imported_at TEXT NOT NULL,
            telemetry   TEXT NOT NULL DEFAULT 'null'
        )
        """,
        "CREATE UNIQUE INDEX imported_runs_by_source ON imported_runs (source_dir)",
        "CREATE INDEX events_by_kind ON events (kind, run_id, seq)",
)
