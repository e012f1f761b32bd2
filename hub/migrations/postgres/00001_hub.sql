-- The hub's schema on PostgreSQL: every project pushed to it, the journal
-- lines each pushed, and what they are derived into. Like a project's SQLite
-- index it is derived from the journals (on the machines that pushed them),
-- fed one way, by `orbit push`; every row carries its project, and every
-- query names it.

-- +goose Up

-- One row per project (its id is the project's .claude/orbit-project.json).
-- The counters are kept by the push transaction, so that the project list
-- never counts a million rows.
CREATE TABLE hub_projects (
    id             TEXT   PRIMARY KEY,
    name           TEXT   NOT NULL DEFAULT '',
    first_push_ns  BIGINT NOT NULL DEFAULT 0,
    last_push_ns   BIGINT NOT NULL DEFAULT 0,
    chunks         BIGINT NOT NULL DEFAULT 0,
    bytes          BIGINT NOT NULL DEFAULT 0,
    decisions      BIGINT NOT NULL DEFAULT 0,
    events         BIGINT NOT NULL DEFAULT 0,
    rejected       BIGINT NOT NULL DEFAULT 0,
    loop_events    BIGINT NOT NULL DEFAULT 0,
    knowledge_hits BIGINT NOT NULL DEFAULT 0,
    max_iteration  BIGINT NOT NULL DEFAULT 0
);

-- What the hub acknowledged of each journal of each project: the byte offset
-- and line just past the last chunk committed, the last 4096 bytes before it
-- (so a push can tell that the file's past is still the one the hub holds),
-- and the event time carried from line to line (a line without a valid ts
-- takes the last one before it in the same file).
CREATE TABLE hub_files (
    project_id  TEXT   NOT NULL REFERENCES hub_projects (id),
    kind        TEXT   NOT NULL CHECK (kind IN ('decisions', 'retro', 'loops', 'knowledge')),
    path        TEXT   NOT NULL,
    acked_offset BIGINT NOT NULL DEFAULT 0,
    acked_lines BIGINT NOT NULL DEFAULT 0,
    tail        BYTEA  NOT NULL DEFAULT '',
    last_ts_ns  BIGINT NOT NULL DEFAULT 0,
    acked_at_ns BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, kind)
);

-- Every chunk pushed (a line, or a record pretty-printed over several), byte
-- for byte: the hub's own copy of the journals. Keyed by where it stands in
-- its file, so a chunk pushed twice is stored once. state: record (indexed
-- below), blank, or rejected (message says why; kept, like the local index
-- keeps a rejected line's finding).
CREATE TABLE hub_chunks (
    project_id  TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    byte_offset BIGINT NOT NULL,
    length      BIGINT NOT NULL,
    line        BIGINT NOT NULL,
    line_end    BIGINT NOT NULL,
    state       TEXT   NOT NULL CHECK (state IN ('record', 'blank', 'rejected')),
    message     TEXT   NOT NULL DEFAULT '',
    text        BYTEA  NOT NULL,
    PRIMARY KEY (project_id, kind, byte_offset),
    FOREIGN KEY (project_id, kind) REFERENCES hub_files (project_id, kind)
);

-- Decisions, keyed by (project, id): the first line with an id wins, as in
-- the local index. Journal order is byte_offset. conf_bucket and conf_u are
-- round(confidence * 100) and round(confidence * 1e6), computed by the same
-- Go code as the local totals so that calibration is the same to the bit.
-- search is the weighted text precedent search ranks: what was decided (A),
-- the request's own description (B), the reason (C), the next action (D).
CREATE TABLE hub_decisions (
    project_id    TEXT   NOT NULL REFERENCES hub_projects (id),
    id            TEXT   NOT NULL,
    byte_offset   BIGINT NOT NULL,
    line          BIGINT NOT NULL,
    iteration     BIGINT NOT NULL,
    ts            TEXT   NOT NULL DEFAULT '',
    ts_ns         BIGINT,
    tier          TEXT   NOT NULL,
    depth         TEXT   NOT NULL,
    category      TEXT   NOT NULL,
    input         TEXT   NOT NULL,
    decision      TEXT   NOT NULL,
    reason        TEXT   NOT NULL DEFAULT '',
    next_action   TEXT   NOT NULL DEFAULT '',
    verification  TEXT   NOT NULL DEFAULT 'PENDING',
    retro_prev_id TEXT,
    retro_outcome TEXT   NOT NULL DEFAULT 'N/A',
    confidence    DOUBLE PRECISION,
    conf_bucket   INTEGER,
    conf_u        BIGINT,
    requestor     TEXT   NOT NULL DEFAULT '',
    context       TEXT   NOT NULL DEFAULT '',
    request_id    TEXT   NOT NULL DEFAULT '',
    search        TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', input), 'A') ||
        setweight(to_tsvector('english', context), 'B') ||
        setweight(to_tsvector('english', reason), 'C') ||
        setweight(to_tsvector('english', next_action), 'D')) STORED,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX hub_decisions_order ON hub_decisions (project_id, byte_offset);
CREATE INDEX hub_decisions_iteration ON hub_decisions (project_id, iteration, byte_offset);
CREATE INDEX hub_decisions_category ON hub_decisions (category, project_id);
CREATE INDEX hub_decisions_search ON hub_decisions USING gin (search);

-- Outcome events: a decision line's retrograde field (kind 'decisions',
-- src_rank 0) or a line of the retrograde journal (kind 'retro', src_rank 1),
-- keyed by where the line stands.
CREATE TABLE hub_events (
    project_id  TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    byte_offset BIGINT NOT NULL,
    decision_id TEXT   NOT NULL,
    outcome     TEXT   NOT NULL CHECK (outcome IN ('CORRECT', 'INCORRECT', 'PENDING', 'N/A')),
    at_ns       BIGINT NOT NULL,
    src_rank    INTEGER NOT NULL,
    line        BIGINT NOT NULL,
    ts          TEXT   NOT NULL DEFAULT '',
    evidence    TEXT   NOT NULL DEFAULT '',
    PRIMARY KEY (project_id, kind, byte_offset)
);
CREATE INDEX hub_events_decision ON hub_events (project_id, decision_id);

-- The current outcome of each decision with an event: its latest in
-- (at_ns, src_rank, line) order. An outcome may arrive before its decision:
-- it waits (decision_offset NULL) and counts once the decision is pushed,
-- as in the local index. The decision's fields trust breaks down by are
-- copied here when it is known, so that trust across a million decisions
-- reads this narrow table alone.
CREATE TABLE hub_outcomes (
    project_id      TEXT    NOT NULL,
    decision_id     TEXT    NOT NULL,
    outcome         TEXT    NOT NULL,
    at_ns           BIGINT  NOT NULL,
    src_rank        INTEGER NOT NULL,
    line            BIGINT  NOT NULL,
    decision_offset BIGINT,
    iteration       BIGINT,
    category        TEXT,
    tier            TEXT,
    depth           TEXT,
    requestor       TEXT,
    conf_bucket     INTEGER,
    conf_u          BIGINT,
    PRIMARY KEY (project_id, decision_id)
);
-- The scored decisions of a project in journal order (trust's last 20).
CREATE INDEX hub_outcomes_scored ON hub_outcomes (project_id, decision_offset)
    WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_offset IS NOT NULL;
CREATE INDEX hub_outcomes_waiting ON hub_outcomes (project_id, decision_id) WHERE decision_offset IS NULL;

-- Each loop as its latest event in the loop event journal says.
CREATE TABLE hub_loops (
    project_id     TEXT   NOT NULL REFERENCES hub_projects (id),
    framework      TEXT   NOT NULL,
    loop_id        TEXT   NOT NULL,
    title          TEXT   NOT NULL DEFAULT '',
    status         TEXT   NOT NULL DEFAULT '',
    native_status  TEXT   NOT NULL DEFAULT '',
    iteration      BIGINT,
    max_iterations BIGINT,
    updated_at     TEXT   NOT NULL DEFAULT '',
    budget_used    DOUBLE PRECISION,
    budget_limit   DOUBLE PRECISION,
    last_event     TEXT   NOT NULL DEFAULT '',
    last_ts        TEXT   NOT NULL DEFAULT '',
    last_offset    BIGINT NOT NULL DEFAULT 0,
    events         BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, framework, loop_id)
);

-- Tokens: sha256 of the token (never the token), the project it is for ('*'
-- for every project: read scope only) and what it may do.
CREATE TABLE hub_tokens (
    hash       TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    scope      TEXT NOT NULL CHECK (scope IN ('push', 'read')),
    created_at TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX hub_tokens_project ON hub_tokens (project_id);

-- +goose Down
DROP TABLE hub_tokens;
DROP TABLE hub_loops;
DROP TABLE hub_outcomes;
DROP TABLE hub_events;
DROP TABLE hub_decisions;
DROP TABLE hub_chunks;
DROP TABLE hub_files;
DROP TABLE hub_projects;
