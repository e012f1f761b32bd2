-- Schema v1: the four record kinds orbit indexes (decisions with their outcome
-- events, loop records with their events, knowledge patterns), the per-file
-- sync state, the findings about lines that could not be indexed cleanly, and
-- the full-text index over decision text.

-- +goose Up

-- One row per authoritative file that sync reads (decision journal,
-- retrograde journal). offset/lines mark the end of the last complete record
-- ingested; tail_hash is sha256 of up to 4096 bytes before offset, so a grown
-- file is checked cheaply for a rewritten past (a file that did not grow, or
-- is another inode, is compared line by line), or 'past-changed' once verify
-- found the past changed, so that the next sync compares and rebuilds it.
-- torn_line/torn_size locate an unterminated last line. records, events,
-- rejected and warnings count what was indexed from the file, so that
-- totals never need a count(*) over a million rows.
CREATE TABLE journal_files (
    id            INTEGER PRIMARY KEY,
    path          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL CHECK (kind IN ('decisions', 'retro')),
    dev           INTEGER NOT NULL DEFAULT 0,
    ino           INTEGER NOT NULL DEFAULT 0,
    size          INTEGER NOT NULL DEFAULT 0,
    mtime_ns      INTEGER NOT NULL DEFAULT 0,
    synced_offset INTEGER NOT NULL DEFAULT 0,
    synced_lines  INTEGER NOT NULL DEFAULT 0,
    tail_hash     TEXT    NOT NULL DEFAULT '',
    last_ts_ns    INTEGER NOT NULL DEFAULT 0,
    torn_line     INTEGER NOT NULL DEFAULT 0,
    torn_size     INTEGER NOT NULL DEFAULT 0,
    records       INTEGER NOT NULL DEFAULT 0,
    events        INTEGER NOT NULL DEFAULT 0,
    rejected      INTEGER NOT NULL DEFAULT 0,
    warnings      INTEGER NOT NULL DEFAULT 0,
    synced_at     TEXT    NOT NULL DEFAULT ''
);

-- Decisions in journal order (seq). raw is the record's exact text as it
-- stands in the file, so exports give back the same bytes and unknown fields
-- survive.
CREATE TABLE decisions (
    seq           INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    file_id       INTEGER NOT NULL REFERENCES journal_files (id),
    line          INTEGER NOT NULL,
    line_end      INTEGER NOT NULL,
    byte_offset   INTEGER NOT NULL,
    iteration     INTEGER NOT NULL,
    ts            TEXT    NOT NULL DEFAULT '',
    ts_ns         INTEGER,
    tier          TEXT    NOT NULL,
    depth         TEXT    NOT NULL,
    category      TEXT    NOT NULL,
    input         TEXT    NOT NULL,
    decision      TEXT    NOT NULL,
    reason        TEXT    NOT NULL DEFAULT '',
    next_action   TEXT    NOT NULL DEFAULT '',
    verification  TEXT    NOT NULL DEFAULT 'PENDING',
    retro_prev_id TEXT,
    retro_outcome TEXT    NOT NULL DEFAULT 'N/A',
    confidence    REAL,
    requestor     TEXT    NOT NULL DEFAULT '',
    context       TEXT    NOT NULL DEFAULT '',
    request_id    TEXT    NOT NULL DEFAULT '',
    raw           TEXT    NOT NULL
);
CREATE INDEX decisions_category     ON decisions (category, seq);
CREATE INDEX decisions_iteration    ON decisions (iteration, seq);
CREATE INDEX decisions_request      ON decisions (request_id) WHERE request_id <> '';
-- The session's decisions (since the loop started) for the progress file and
-- the Stop hook's summary, without a scan of the whole journal.
CREATE INDEX decisions_time         ON decisions (ts_ns);
-- verification stays PENDING in every line orbit writes (outcomes are events,
-- never edits), so only the other values are worth an index.
CREATE INDEX decisions_verification ON decisions (verification, seq) WHERE verification <> 'PENDING';

-- Outcome events, append-only. Ordered by (at_ns, src_rank, line): the event
-- time (the line's ts, or the last valid ts before it in the same file), then
-- the retrograde journal (1) after retrograde fields of decision lines (0).
CREATE TABLE outcome_events (
    seq         INTEGER PRIMARY KEY,
    decision_id TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('CORRECT', 'INCORRECT', 'PENDING', 'N/A')),
    at_ns       INTEGER NOT NULL,
    src_rank    INTEGER NOT NULL,
    ts          TEXT    NOT NULL DEFAULT '',
    evidence    TEXT    NOT NULL DEFAULT '',
    file_id     INTEGER NOT NULL REFERENCES journal_files (id),
    line        INTEGER NOT NULL,
    recorded_by TEXT    NOT NULL DEFAULT '',
    raw         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX outcome_events_decision ON outcome_events (decision_id, at_ns, src_rank, line);
-- The latest outcomes, and those since the previous Stop, in event order.
CREATE INDEX outcome_events_time ON outcome_events (at_ns, src_rank, line);

-- The current outcome of every decision that has an event: its latest one.
-- A narrow table kept by an upsert per sync batch, so that recording an
-- outcome never rewrites the wide decision row; decisions without a row here
-- are PENDING. Keyed by id, so an outcome recorded before its decision is
-- synced waits here (decision_seq NULL) and applies when the decision arrives.
CREATE TABLE decision_outcomes (
    decision_id  TEXT    PRIMARY KEY,
    decision_seq INTEGER,
    outcome      TEXT    NOT NULL,
    event_seq    INTEGER NOT NULL,
    at_ns        INTEGER NOT NULL,
    src_rank     INTEGER NOT NULL,
    line         INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX decision_outcomes_outcome ON decision_outcomes (outcome, decision_seq);
-- The scored decisions (CORRECT or INCORRECT) in journal order: trust reads
-- the last 20 and the last 10 from here without a scan.
CREATE INDEX decision_outcomes_scored ON decision_outcomes (decision_seq)
    WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_seq IS NOT NULL;
CREATE INDEX decision_outcomes_waiting ON decision_outcomes (decision_id) WHERE decision_seq IS NULL;

-- Derived totals, kept exact by the triggers below so that the hook path
-- and `orbit trust` read them instead of scanning a million decisions.
-- A decision counts once it is indexed (decision_seq set); the trust tables
-- count the scored ones (CORRECT or INCORRECT). Confidence sums are integers
-- in millionths, so that a rebuild gives back exactly the same figures.
CREATE TABLE outcome_totals (
    outcome TEXT    PRIMARY KEY,
    n       INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO outcome_totals (outcome, n) VALUES ('CORRECT', 0), ('INCORRECT', 0), ('PENDING', 0), ('N/A', 0);

CREATE TABLE trust_cells (
    category  TEXT    NOT NULL,
    tier      TEXT    NOT NULL,
    depth     TEXT    NOT NULL,
    requestor TEXT    NOT NULL,
    correct   INTEGER NOT NULL,
    incorrect INTEGER NOT NULL,
    PRIMARY KEY (category, tier, depth, requestor)
) WITHOUT ROWID;

CREATE TABLE trust_iterations (
    iteration INTEGER PRIMARY KEY,
    correct   INTEGER NOT NULL,
    incorrect INTEGER NOT NULL
);

-- bucket is round(confidence * 100): 0..100.
CREATE TABLE trust_calibration (
    bucket        INTEGER PRIMARY KEY,
    n             INTEGER NOT NULL,
    correct       INTEGER NOT NULL,
    conf_u        INTEGER NOT NULL,
    conf2_u2      INTEGER NOT NULL,
    conf_correct_u INTEGER NOT NULL
);

-- +goose StatementBegin
CREATE TRIGGER decision_outcomes_insert AFTER INSERT ON decision_outcomes
WHEN NEW.decision_seq IS NOT NULL BEGIN
    UPDATE outcome_totals SET n = n + 1 WHERE outcome = NEW.outcome;
    INSERT INTO trust_cells (category, tier, depth, requestor, correct, incorrect)
        SELECT d.category, d.tier, d.depth, d.requestor, NEW.outcome = 'CORRECT', NEW.outcome = 'INCORRECT'
        FROM decisions d WHERE d.seq = NEW.decision_seq AND NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET correct = correct + excluded.correct, incorrect = incorrect + excluded.incorrect;
    INSERT INTO trust_iterations (iteration, correct, incorrect)
        SELECT d.iteration, NEW.outcome = 'CORRECT', NEW.outcome = 'INCORRECT'
        FROM decisions d WHERE d.seq = NEW.decision_seq AND NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET correct = correct + excluded.correct, incorrect = incorrect + excluded.incorrect;
    INSERT INTO trust_calibration (bucket, n, correct, conf_u, conf2_u2, conf_correct_u)
        SELECT c.b, 1, NEW.outcome = 'CORRECT', c.u, c.u * c.u, c.u * (NEW.outcome = 'CORRECT')
        FROM (SELECT CAST(round(d.confidence * 100) AS INTEGER) AS b, CAST(round(d.confidence * 1000000) AS INTEGER) AS u
              FROM decisions d WHERE d.seq = NEW.decision_seq AND d.confidence IS NOT NULL) c
        WHERE NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET n = n + excluded.n, correct = correct + excluded.correct, conf_u = conf_u + excluded.conf_u,
            conf2_u2 = conf2_u2 + excluded.conf2_u2, conf_correct_u = conf_correct_u + excluded.conf_correct_u;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_outcomes_delete AFTER DELETE ON decision_outcomes
WHEN OLD.decision_seq IS NOT NULL BEGIN
    UPDATE outcome_totals SET n = n - 1 WHERE outcome = OLD.outcome;
    UPDATE trust_cells SET correct = correct - (OLD.outcome = 'CORRECT'), incorrect = incorrect - (OLD.outcome = 'INCORRECT')
        WHERE (category, tier, depth, requestor) = (SELECT d.category, d.tier, d.depth, d.requestor FROM decisions d WHERE d.seq = OLD.decision_seq);
    UPDATE trust_iterations SET correct = correct - (OLD.outcome = 'CORRECT'), incorrect = incorrect - (OLD.outcome = 'INCORRECT')
        WHERE iteration = (SELECT d.iteration FROM decisions d WHERE d.seq = OLD.decision_seq);
    UPDATE trust_calibration SET n = n - 1, correct = correct - (OLD.outcome = 'CORRECT'),
            conf_u = conf_u - c.u, conf2_u2 = conf2_u2 - c.u * c.u, conf_correct_u = conf_correct_u - c.u * (OLD.outcome = 'CORRECT')
        FROM (SELECT CAST(round(d.confidence * 100) AS INTEGER) AS b, CAST(round(d.confidence * 1000000) AS INTEGER) AS u
              FROM decisions d WHERE d.seq = OLD.decision_seq AND d.confidence IS NOT NULL) c
        WHERE bucket = c.b AND OLD.outcome IN ('CORRECT', 'INCORRECT');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER decision_outcomes_update AFTER UPDATE OF outcome, decision_seq ON decision_outcomes BEGIN
    UPDATE outcome_totals SET n = n - 1 WHERE OLD.decision_seq IS NOT NULL AND outcome = OLD.outcome;
    UPDATE outcome_totals SET n = n + 1 WHERE NEW.decision_seq IS NOT NULL AND outcome = NEW.outcome;
    UPDATE trust_cells SET correct = correct - (OLD.outcome = 'CORRECT'), incorrect = incorrect - (OLD.outcome = 'INCORRECT')
        WHERE OLD.decision_seq IS NOT NULL
          AND (category, tier, depth, requestor) = (SELECT d.category, d.tier, d.depth, d.requestor FROM decisions d WHERE d.seq = OLD.decision_seq);
    INSERT INTO trust_cells (category, tier, depth, requestor, correct, incorrect)
        SELECT d.category, d.tier, d.depth, d.requestor, NEW.outcome = 'CORRECT', NEW.outcome = 'INCORRECT'
        FROM decisions d WHERE d.seq = NEW.decision_seq AND NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET correct = correct + excluded.correct, incorrect = incorrect + excluded.incorrect;
    UPDATE trust_iterations SET correct = correct - (OLD.outcome = 'CORRECT'), incorrect = incorrect - (OLD.outcome = 'INCORRECT')
        WHERE OLD.decision_seq IS NOT NULL AND iteration = (SELECT d.iteration FROM decisions d WHERE d.seq = OLD.decision_seq);
    INSERT INTO trust_iterations (iteration, correct, incorrect)
        SELECT d.iteration, NEW.outcome = 'CORRECT', NEW.outcome = 'INCORRECT'
        FROM decisions d WHERE d.seq = NEW.decision_seq AND NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET correct = correct + excluded.correct, incorrect = incorrect + excluded.incorrect;
    UPDATE trust_calibration SET n = n - 1, correct = correct - (OLD.outcome = 'CORRECT'),
            conf_u = conf_u - c.u, conf2_u2 = conf2_u2 - c.u * c.u, conf_correct_u = conf_correct_u - c.u * (OLD.outcome = 'CORRECT')
        FROM (SELECT CAST(round(d.confidence * 100) AS INTEGER) AS b, CAST(round(d.confidence * 1000000) AS INTEGER) AS u
              FROM decisions d WHERE d.seq = OLD.decision_seq AND d.confidence IS NOT NULL) c
        WHERE bucket = c.b AND OLD.decision_seq IS NOT NULL AND OLD.outcome IN ('CORRECT', 'INCORRECT');
    INSERT INTO trust_calibration (bucket, n, correct, conf_u, conf2_u2, conf_correct_u)
        SELECT c.b, 1, NEW.outcome = 'CORRECT', c.u, c.u * c.u, c.u * (NEW.outcome = 'CORRECT')
        FROM (SELECT CAST(round(d.confidence * 100) AS INTEGER) AS b, CAST(round(d.confidence * 1000000) AS INTEGER) AS u
              FROM decisions d WHERE d.seq = NEW.decision_seq AND d.confidence IS NOT NULL) c
        WHERE NEW.outcome IN ('CORRECT', 'INCORRECT')
        ON CONFLICT DO UPDATE SET n = n + excluded.n, correct = correct + excluded.correct, conf_u = conf_u + excluded.conf_u,
            conf2_u2 = conf2_u2 + excluded.conf2_u2, conf_correct_u = conf_correct_u + excluded.conf_correct_u;
END;
-- +goose StatementEnd

-- Lines that were rejected (severity error: kept in the file, not indexed) or
-- accepted with a remark (severity warning).
CREATE TABLE findings (
    seq         INTEGER PRIMARY KEY,
    file_id     INTEGER NOT NULL REFERENCES journal_files (id),
    line        INTEGER NOT NULL,
    line_end    INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    length      INTEGER NOT NULL,
    severity    TEXT    NOT NULL CHECK (severity IN ('error', 'warning')),
    code        TEXT    NOT NULL,
    record_id   TEXT    NOT NULL DEFAULT '',
    message     TEXT    NOT NULL,
    excerpt     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX findings_file ON findings (file_id, line);

-- Loop records of every framework, normalised to the shared stop vocabulary,
-- and their events. The events' authoritative file is orbit's loop event
-- journal (.claude/orbit-loop-events.jsonl, append-only): plan, run attempts,
-- stop, pause, resume, and the status changes orbit saw when reading a loop.
-- So the history of a loop survives any later rewrite of its own file, and
-- deleting the index loses nothing. A loops row is what the latest event said
-- about the loop (the "last seen" state `orbit loop list` compares with).
CREATE TABLE loops (
    id             INTEGER PRIMARY KEY,
    framework      TEXT    NOT NULL,
    loop_id        TEXT    NOT NULL,
    path           TEXT    NOT NULL DEFAULT '',
    title          TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL DEFAULT '',
    native_status  TEXT    NOT NULL DEFAULT '',
    iteration      INTEGER,
    max_iterations INTEGER,
    updated_at     TEXT    NOT NULL DEFAULT '',
    budget_used    REAL,
    budget_limit   REAL,
    last_event     INTEGER NOT NULL DEFAULT 0,
    events         INTEGER NOT NULL DEFAULT 0,
    UNIQUE (framework, loop_id)
);
-- One row per line of the loop event journal. end_offset is the byte offset
-- just after the line: the highest one is where the next sync starts reading.
CREATE TABLE loop_events (
    seq           INTEGER PRIMARY KEY,
    loop_ref      INTEGER NOT NULL REFERENCES loops (id),
    line          INTEGER NOT NULL,
    end_offset    INTEGER NOT NULL UNIQUE,
    at            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    status        TEXT    NOT NULL DEFAULT '',
    native_status TEXT    NOT NULL DEFAULT '',
    detail        TEXT    NOT NULL DEFAULT '',
    raw           TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX loop_events_loop ON loop_events (loop_ref, seq);

-- Knowledge patterns: conductor's errors.json entries and patterns.md sections.
-- One row per knowledge file sync reads: errors.json and patterns.md of each
-- knowledge directory (re-read whole, and only when dev/ino/size/mtime say it
-- changed and its sha256 differs), and orbit's own knowledge journal
-- (.claude/orbit-knowledge.jsonl: match hits, exports, registered
-- directories; append-only, read from synced_offset like the decision
-- journal). error is why the file could not be read, with file:line.
CREATE TABLE knowledge_files (
    id            INTEGER PRIMARY KEY,
    path          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL CHECK (kind IN ('errors', 'patterns', 'journal')),
    dev           INTEGER NOT NULL DEFAULT 0,
    ino           INTEGER NOT NULL DEFAULT 0,
    size          INTEGER NOT NULL DEFAULT 0,
    mtime_ns      INTEGER NOT NULL DEFAULT 0,
    hash          TEXT    NOT NULL DEFAULT '',
    shape         TEXT    NOT NULL DEFAULT '',
    synced_offset INTEGER NOT NULL DEFAULT 0,
    synced_lines  INTEGER NOT NULL DEFAULT 0,
    tail_hash     TEXT    NOT NULL DEFAULT '',
    entries       INTEGER NOT NULL DEFAULT 0,
    error         TEXT    NOT NULL DEFAULT '',
    synced_at     TEXT    NOT NULL DEFAULT ''
);

-- The entries of the knowledge files, in file order (ordinal). entry_id is the
-- entry's own id (err-003), or #N (its position) when it has none or repeats
-- one. pattern_state says whether the regex is usable: ok, none (no pattern:
-- full-text only), invalid (RE2 refused it: pattern_error says why), or
-- matches_all (it matches any text, so it would win for every error). specificity is
-- how many literal characters the regex requires (ranks regex hits).
-- occurrences and last_seen are what the file says; hits recorded since the
-- last export are in knowledge_events.
CREATE TABLE knowledge_patterns (
    id            INTEGER PRIMARY KEY,
    file_id       INTEGER NOT NULL REFERENCES knowledge_files (id),
    source_path   TEXT    NOT NULL,
    entry_id      TEXT    NOT NULL,
    ordinal       INTEGER NOT NULL,
    line          INTEGER NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('error', 'pattern')),
    name          TEXT    NOT NULL DEFAULT '',
    pattern       TEXT    NOT NULL DEFAULT '',
    pattern_state TEXT    NOT NULL DEFAULT 'none' CHECK (pattern_state IN ('ok', 'none', 'invalid', 'matches_all')),
    pattern_error TEXT    NOT NULL DEFAULT '',
    specificity   INTEGER NOT NULL DEFAULT 0,
    category      TEXT    NOT NULL DEFAULT '',
    track         TEXT    NOT NULL DEFAULT '',
    symptom       TEXT    NOT NULL DEFAULT '',
    solution      TEXT    NOT NULL DEFAULT '',
    code_fix      TEXT    NOT NULL DEFAULT '',
    occurrences   INTEGER NOT NULL DEFAULT 0,
    last_seen     TEXT    NOT NULL DEFAULT '',
    raw           TEXT    NOT NULL DEFAULT '',
    UNIQUE (source_path, entry_id)
);
CREATE INDEX knowledge_patterns_file ON knowledge_patterns (file_id, ordinal);

-- The regex prefilter: for each usable regex, the literals (case-folded) of
-- its rarest requirement (every text it matches contains one of them), each
-- filed under its rarest byte trigram (b0<<16 | b1<<8 | b2; -1 for a literal
-- shorter than three bytes or a regex that requires none). A match compiles
-- only the regexes whose trigram occurs in the error text and whose literal
-- it contains.
CREATE TABLE knowledge_atoms (
    pattern_id INTEGER NOT NULL REFERENCES knowledge_patterns (id),
    tri        INTEGER NOT NULL,
    atom       TEXT    NOT NULL
);
CREATE INDEX knowledge_atoms_tri ON knowledge_atoms (tri);
CREATE INDEX knowledge_atoms_pattern ON knowledge_atoms (pattern_id);

-- The lines of the knowledge journal: hit (a regex match of an entry),
-- export (errors.json rewritten with the hits folded in: before/after are
-- the sha256 of the file, so an export cut short is told apart), source (a
-- knowledge directory registered by `orbit knowledge import DIR`).
CREATE TABLE knowledge_events (
    seq         INTEGER PRIMARY KEY,
    file_id     INTEGER NOT NULL REFERENCES knowledge_files (id),
    line        INTEGER NOT NULL,
    event       TEXT    NOT NULL CHECK (event IN ('hit', 'export', 'source')),
    path        TEXT    NOT NULL,
    entry_id    TEXT    NOT NULL DEFAULT '',
    ts          TEXT    NOT NULL DEFAULT '',
    day         TEXT    NOT NULL DEFAULT '',
    before_hash TEXT    NOT NULL DEFAULT '',
    after_hash  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX knowledge_events_path ON knowledge_events (event, path, seq);
CREATE INDEX knowledge_events_hits ON knowledge_events (path, entry_id, seq) WHERE event = 'hit';

-- Full-text index over the entries without a usable regex (and every
-- patterns.md entry), external content kept in step by the knowledge sync.
CREATE VIRTUAL TABLE knowledge_fts USING fts5(
    name, symptom, solution,
    content = 'knowledge_patterns',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    detail = column
);

-- Full-text index over decision text, external content kept in step by sync.
-- detail=column keeps which columns hold a term (so bm25 can weight fields)
-- but not its positions: no phrase or NEAR queries, which precedent search
-- does not use, for a 12% faster load of a 1M-decision journal.
CREATE VIRTUAL TABLE decisions_fts USING fts5(
    input, reason, next_action, context,
    content = 'decisions',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2',
    detail = column
);
-- Per-term document counts of the full-text index. Never read (precedent
-- search takes its counts from FTS5's own records): 00002 drops it.
CREATE VIRTUAL TABLE decisions_vocab USING fts5vocab(decisions_fts, 'row');

-- +goose Down
DROP TABLE decisions_vocab;
DROP TABLE decisions_fts;
DROP TABLE knowledge_fts;
DROP TABLE knowledge_events;
DROP TABLE knowledge_atoms;
DROP TABLE knowledge_patterns;
DROP TABLE knowledge_files;
DROP TABLE loop_events;
DROP TABLE loops;
DROP TABLE findings;
DROP TABLE trust_calibration;
DROP TABLE trust_iterations;
DROP TABLE trust_cells;
DROP TABLE outcome_totals;
DROP TABLE decision_outcomes;
DROP TABLE outcome_events;
DROP TABLE decisions;
DROP TABLE journal_files;
