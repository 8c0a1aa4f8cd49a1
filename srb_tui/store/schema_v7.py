"""The V7 schema step's statements: strength campaigns (issue 36) — the mutants of a task's
State A (or reference) graded by Stage II and, for its survivors, by Stage III's panel, and
the author's equivalent-mutant marks. Plain text only, so ``migrations`` imports it without
a cycle."""

from __future__ import annotations

V7_NAME = "strength campaigns, their mutants and catches; equivalent-mutant marks"
V7_STATEMENTS: tuple[str, ...] = (
    """
        CREATE TABLE strength_campaigns (
            id          TEXT PRIMARY KEY,
            task_id     TEXT NOT NULL,
            task_path   TEXT NOT NULL,
            of_tree     TEXT NOT NULL CHECK (of_tree IN ('state-a', 'reference')),
            asked       INTEGER NOT NULL,
            seed        INTEGER NOT NULL,
            panel       TEXT NOT NULL DEFAULT '[]',
            budget_sec  REAL,
            baseline    TEXT,
            node        TEXT,
            status      TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            updated_at  TEXT NOT NULL
        )
    """,
    """
        CREATE TABLE strength_mutants (
            campaign_id  TEXT NOT NULL REFERENCES strength_campaigns(id) ON DELETE CASCADE,
            mutant_id    TEXT NOT NULL,
            key          TEXT NOT NULL,
            position     INTEGER NOT NULL,
            path         TEXT NOT NULL,
            line         INTEGER NOT NULL,
            operator     TEXT NOT NULL,
            doc          TEXT NOT NULL,
            stage_ii     TEXT CHECK (stage_ii IN ('killed', 'survived', 'invalid')),
            stage_ii_doc TEXT,
            stage_iii_run TEXT,
            stage_iii_done INTEGER NOT NULL DEFAULT 0,
            updated_at   TEXT NOT NULL,
            PRIMARY KEY (campaign_id, mutant_id),
            UNIQUE (campaign_id, key)
        ) WITHOUT ROWID
    """,
    """
        CREATE TABLE strength_catches (
            campaign_id  TEXT NOT NULL,
            mutant_id    TEXT NOT NULL,
            adversary    TEXT NOT NULL,
            outcome      TEXT NOT NULL,
            counterexample_id INTEGER,
            PRIMARY KEY (campaign_id, mutant_id, adversary),
            FOREIGN KEY (campaign_id, mutant_id)
                REFERENCES strength_mutants(campaign_id, mutant_id) ON DELETE CASCADE
        ) WITHOUT ROWID
    """,
    """
        CREATE TABLE strength_equivalents (
            task_id    TEXT NOT NULL,
            key        TEXT NOT NULL,
            marked_by  TEXT NOT NULL,
            reason     TEXT NOT NULL,
            marked_at  TEXT NOT NULL,
            PRIMARY KEY (task_id, key)
        ) WITHOUT ROWID
    """,
)
