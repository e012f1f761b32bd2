-- Schema v7: the enumerations as small integers, and what else an index of
-- a million decisions repeated row by row, so that the index is no bigger
-- than the journal it is derived from (issue 21: 1.14 × the journal at 1M
-- decisions with schema v6).
--
-- 1. decisions keeps tier, depth, category, decision, verification and
--    retro_outcome as codes (tier_code, …: a value's position in seed 000's
--    list, commonest first, db.CodeValues), and the columns of those names
--    are virtual columns that render the text, so that every reader, the
--    trust totals' triggers and the canonical text of raw read text as
--    before. A value without a code would be stored as its text and
--    rendered as it is (none is indexed: seed 000's lists are checked
--    before a line is). The category index holds the codes: a filter by
--    category compares category_code with db.Code.
-- 2. line_end is line + line_span (0 for a one-line record: no byte).
-- 3. confidence is kept in hundredths (confidence_code, an integer) when
--    that is exact, as the REAL itself otherwise; confidence renders it
--    (85 / 100.0 is the same double as 0.85).
-- 4. outcome_events keeps its outcome as a code, and its ts text only when
--    it is not the canonical UTC rendering of at_ns (ts_text NULL: ts
--    renders it, as decisions' ts does since v6).
-- 5. decision_outcomes keeps its outcome as a code, and loses the index on
--    (outcome, decision_seq): trust's reads of the scored decisions walk
--    decision_outcomes_scored (decision_seq, the same entries) instead.
--
-- SQLite cannot change a column's type or drop an indexed one in place: the
-- three tables are rebuilt (a new table, one INSERT … SELECT in seq order,
-- the old one dropped, the new one renamed, its indexes created from the
-- rows). Each keeps its seq, so the full-text index (external content,
-- by seq) stays as it is. The triggers of the trust totals read decisions:
-- they are dropped first (a trigger naming a dropped table stops ALTER
-- TABLE … RENAME) and created again at the end, after the copy, so that
-- the totals are not counted twice. The file keeps its size (the freed
-- pages are reused by later rows) until `orbit rebuild`.

-- +goose Up
DROP TRIGGER decision_outcomes_insert;
DROP TRIGGER decision_outcomes_delete;
DROP TRIGGER decision_outcomes_update;

-- A column without a declared type has no affinity: it keeps an integer
-- code as an integer and a text as a text.
CREATE TABLE decisions_v7 (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    file_id            INTEGER NOT NULL REFERENCES journal_files (id),
    line               INTEGER NOT NULL,
    line_span          INTEGER NOT NULL DEFAULT 0,
    byte_offset        INTEGER NOT NULL,
    iteration          INTEGER NOT NULL,
    ts_text            TEXT    NOT NULL DEFAULT '',
    ts_ns              INTEGER,
    tier_code                  NOT NULL,
    depth_code                 NOT NULL,
    category_code              NOT NULL,
    input              TEXT    NOT NULL,
    decision_code              NOT NULL,
    reason             TEXT    NOT NULL DEFAULT '',
    next_action        TEXT    NOT NULL DEFAULT '',
    verification_code          NOT NULL DEFAULT 0,
    retro_prev_id      TEXT,
    retro_outcome_code         NOT NULL DEFAULT 0,
    confidence_code,
    requestor          TEXT    NOT NULL DEFAULT '',
    context            TEXT    NOT NULL DEFAULT '',
    request_id         TEXT    NOT NULL DEFAULT '',
    raw                TEXT    NOT NULL,
    ts            TEXT    GENERATED ALWAYS AS (
        iif(ts_text = '' AND ts_ns IS NOT NULL, strftime('%Y-%m-%dT%H:%M:%SZ', ts_ns / 1000000000, 'unixepoch'), ts_text)) VIRTUAL,
    line_end      INTEGER GENERATED ALWAYS AS (line + line_span) VIRTUAL,
    tier          TEXT    GENERATED ALWAYS AS (CASE tier_code WHEN 0 THEN 'auto_approve' WHEN 1 THEN 'quick_review' WHEN 2 THEN 'deep_think' WHEN 3 THEN 'escalate' ELSE tier_code END) VIRTUAL,
    depth         TEXT    GENERATED ALWAYS AS (CASE depth_code WHEN 0 THEN 'trivial' WHEN 1 THEN 'light' WHEN 2 THEN 'medium' WHEN 3 THEN 'heavy' ELSE depth_code END) VIRTUAL,
    category      TEXT    GENERATED ALWAYS AS (CASE category_code WHEN 0 THEN 'feature' WHEN 1 THEN 'architecture' WHEN 2 THEN 'quality' WHEN 3 THEN 'scope' WHEN 4 THEN 'deploy' ELSE category_code END) VIRTUAL,
    decision      TEXT    GENERATED ALWAYS AS (CASE decision_code WHEN 0 THEN 'APPROVED' WHEN 1 THEN 'NEEDS_REVIEW' WHEN 2 THEN 'REJECTED' ELSE decision_code END) VIRTUAL,
    verification  TEXT    GENERATED ALWAYS AS (CASE verification_code WHEN 0 THEN 'PENDING' WHEN 1 THEN 'CONFIRMED' WHEN 2 THEN 'FAILED' ELSE verification_code END) VIRTUAL,
    retro_outcome TEXT    GENERATED ALWAYS AS (CASE retro_outcome_code WHEN 0 THEN 'N/A' WHEN 1 THEN 'CORRECT' WHEN 2 THEN 'INCORRECT' WHEN 3 THEN 'PENDING' ELSE retro_outcome_code END) VIRTUAL,
    confidence    REAL    GENERATED ALWAYS AS (
        iif(typeof(confidence_code) = 'integer', confidence_code / 100.0, confidence_code)) VIRTUAL
);
INSERT INTO decisions_v7 (seq, id, file_id, line, line_span, byte_offset, iteration, ts_text, ts_ns, tier_code, depth_code,
    category_code, input, decision_code, reason, next_action, verification_code, retro_prev_id, retro_outcome_code,
    confidence_code, requestor, context, request_id, raw)
SELECT seq, id, file_id, line, line_end - line, byte_offset, iteration, ts_text, ts_ns, CASE tier WHEN 'auto_approve' THEN 0 WHEN 'quick_review' THEN 1 WHEN 'deep_think' THEN 2 WHEN 'escalate' THEN 3 ELSE tier END,
    CASE depth WHEN 'trivial' THEN 0 WHEN 'light' THEN 1 WHEN 'medium' THEN 2 WHEN 'heavy' THEN 3 ELSE depth END,
    CASE category WHEN 'feature' THEN 0 WHEN 'architecture' THEN 1 WHEN 'quality' THEN 2 WHEN 'scope' THEN 3 WHEN 'deploy' THEN 4 ELSE category END, input,
    CASE decision WHEN 'APPROVED' THEN 0 WHEN 'NEEDS_REVIEW' THEN 1 WHEN 'REJECTED' THEN 2 ELSE decision END, reason, next_action,
    CASE verification WHEN 'PENDING' THEN 0 WHEN 'CONFIRMED' THEN 1 WHEN 'FAILED' THEN 2 ELSE verification END, retro_prev_id,
    CASE retro_outcome WHEN 'N/A' THEN 0 WHEN 'CORRECT' THEN 1 WHEN 'INCORRECT' THEN 2 WHEN 'PENDING' THEN 3 ELSE retro_outcome END,
    iif(confidence > 0 AND confidence = round(confidence * 100) / 100.0, CAST(round(confidence * 100) AS INTEGER), confidence), requestor, context, request_id, raw
FROM decisions ORDER BY seq;
DROP TABLE decisions;
ALTER TABLE decisions_v7 RENAME TO decisions;
CREATE INDEX decisions_request      ON decisions (request_id) WHERE request_id <> '';
CREATE INDEX decisions_time         ON decisions (ts_ns);
CREATE INDEX decisions_category     ON decisions (category_code);
CREATE INDEX decisions_iteration    ON decisions (iteration);
CREATE INDEX decisions_verification ON decisions (verification_code) WHERE verification_code <> 0;

CREATE TABLE outcome_events_v7 (
    seq          INTEGER PRIMARY KEY,
    decision_id  TEXT    NOT NULL,
    outcome_code INTEGER NOT NULL CHECK (outcome_code IN (0, 1, 2, 3)),
    at_ns        INTEGER NOT NULL,
    src_rank     INTEGER NOT NULL,
    ts_text      TEXT,
    evidence     TEXT    NOT NULL DEFAULT '',
    file_id      INTEGER NOT NULL REFERENCES journal_files (id),
    line         INTEGER NOT NULL,
    recorded_by  TEXT    NOT NULL DEFAULT '',
    raw          TEXT    NOT NULL DEFAULT '',
    outcome      TEXT    GENERATED ALWAYS AS (CASE outcome_code WHEN 0 THEN 'N/A' WHEN 1 THEN 'CORRECT' WHEN 2 THEN 'INCORRECT' WHEN 3 THEN 'PENDING' ELSE outcome_code END) VIRTUAL,
    ts           TEXT    GENERATED ALWAYS AS (coalesce(ts_text, strftime('%Y-%m-%dT%H:%M:%SZ', at_ns / 1000000000, 'unixepoch'))) VIRTUAL
);
INSERT INTO outcome_events_v7 (seq, decision_id, outcome_code, at_ns, src_rank, ts_text, evidence, file_id, line, recorded_by, raw)
SELECT seq, decision_id, CASE outcome WHEN 'N/A' THEN 0 WHEN 'CORRECT' THEN 1 WHEN 'INCORRECT' THEN 2 WHEN 'PENDING' THEN 3 ELSE outcome END, at_ns, src_rank,
    CASE WHEN ts = strftime('%Y-%m-%dT%H:%M:%SZ', at_ns / 1000000000, 'unixepoch') THEN NULL ELSE ts END, evidence, file_id, line, recorded_by, raw
FROM outcome_events ORDER BY seq;
DROP TABLE outcome_events;
ALTER TABLE outcome_events_v7 RENAME TO outcome_events;
CREATE INDEX outcome_events_decision ON outcome_events (decision_id, at_ns, src_rank, line);
CREATE INDEX outcome_events_time ON outcome_events (at_ns, src_rank, line);

CREATE TABLE decision_outcomes_v7 (
    decision_id  TEXT    PRIMARY KEY,
    decision_seq INTEGER,
    outcome_code INTEGER NOT NULL,
    event_seq    INTEGER NOT NULL,
    at_ns        INTEGER NOT NULL,
    src_rank     INTEGER NOT NULL,
    line         INTEGER NOT NULL,
    outcome      TEXT    GENERATED ALWAYS AS (CASE outcome_code WHEN 0 THEN 'N/A' WHEN 1 THEN 'CORRECT' WHEN 2 THEN 'INCORRECT' WHEN 3 THEN 'PENDING' ELSE outcome_code END) VIRTUAL
) WITHOUT ROWID;
INSERT INTO decision_outcomes_v7 (decision_id, decision_seq, outcome_code, event_seq, at_ns, src_rank, line)
SELECT decision_id, decision_seq, CASE outcome WHEN 'N/A' THEN 0 WHEN 'CORRECT' THEN 1 WHEN 'INCORRECT' THEN 2 WHEN 'PENDING' THEN 3 ELSE outcome END, event_seq, at_ns, src_rank, line
FROM decision_outcomes ORDER BY decision_id;
DROP TABLE decision_outcomes;
ALTER TABLE decision_outcomes_v7 RENAME TO decision_outcomes;
-- The scored decisions (CORRECT or INCORRECT) in journal order: trust reads
-- the last 20 and the last 10 from here, and the scored decisions of a
-- category or a time range through it.
CREATE INDEX decision_outcomes_scored ON decision_outcomes (decision_seq)
    WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_seq IS NOT NULL;
CREATE INDEX decision_outcomes_waiting ON decision_outcomes (decision_id) WHERE decision_seq IS NULL;

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
CREATE TRIGGER decision_outcomes_update AFTER UPDATE OF outcome_code, decision_seq ON decision_outcomes BEGIN
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

-- +goose Down
DROP TRIGGER decision_outcomes_insert;
DROP TRIGGER decision_outcomes_delete;
DROP TRIGGER decision_outcomes_update;

CREATE TABLE decisions_v6 (
    seq           INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    file_id       INTEGER NOT NULL REFERENCES journal_files (id),
    line          INTEGER NOT NULL,
    line_end      INTEGER NOT NULL,
    byte_offset   INTEGER NOT NULL,
    iteration     INTEGER NOT NULL,
    ts_text       TEXT    NOT NULL DEFAULT '',
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
    raw           TEXT    NOT NULL,
    ts            TEXT    GENERATED ALWAYS AS (
        iif(ts_text = '' AND ts_ns IS NOT NULL, strftime('%Y-%m-%dT%H:%M:%SZ', ts_ns / 1000000000, 'unixepoch'), ts_text)) VIRTUAL
);
INSERT INTO decisions_v6 (seq, id, file_id, line, line_end, byte_offset, iteration, ts_text, ts_ns, tier, depth, category, input,
    decision, reason, next_action, verification, retro_prev_id, retro_outcome, confidence, requestor, context, request_id, raw)
SELECT seq, id, file_id, line, line_end, byte_offset, iteration, ts_text, ts_ns, tier, depth, category, input,
    decision, reason, next_action, verification, retro_prev_id, retro_outcome, confidence, requestor, context, request_id, raw
FROM decisions ORDER BY seq;
DROP TABLE decisions;
ALTER TABLE decisions_v6 RENAME TO decisions;
CREATE INDEX decisions_request      ON decisions (request_id) WHERE request_id <> '';
CREATE INDEX decisions_time         ON decisions (ts_ns);
CREATE INDEX decisions_category     ON decisions (category);
CREATE INDEX decisions_iteration    ON decisions (iteration);
CREATE INDEX decisions_verification ON decisions (verification) WHERE verification <> 'PENDING';

CREATE TABLE outcome_events_v6 (
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
INSERT INTO outcome_events_v6 (seq, decision_id, outcome, at_ns, src_rank, ts, evidence, file_id, line, recorded_by, raw)
SELECT seq, decision_id, outcome, at_ns, src_rank, ts, evidence, file_id, line, recorded_by, raw
FROM outcome_events ORDER BY seq;
DROP TABLE outcome_events;
ALTER TABLE outcome_events_v6 RENAME TO outcome_events;
CREATE INDEX outcome_events_decision ON outcome_events (decision_id, at_ns, src_rank, line);
CREATE INDEX outcome_events_time ON outcome_events (at_ns, src_rank, line);

CREATE TABLE decision_outcomes_v6 (
    decision_id  TEXT    PRIMARY KEY,
    decision_seq INTEGER,
    outcome      TEXT    NOT NULL,
    event_seq    INTEGER NOT NULL,
    at_ns        INTEGER NOT NULL,
    src_rank     INTEGER NOT NULL,
    line         INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO decision_outcomes_v6 (decision_id, decision_seq, outcome, event_seq, at_ns, src_rank, line)
SELECT decision_id, decision_seq, outcome, event_seq, at_ns, src_rank, line
FROM decision_outcomes ORDER BY decision_id;
DROP TABLE decision_outcomes;
ALTER TABLE decision_outcomes_v6 RENAME TO decision_outcomes;
CREATE INDEX decision_outcomes_outcome ON decision_outcomes (outcome, decision_seq);
CREATE INDEX decision_outcomes_scored ON decision_outcomes (decision_seq)
    WHERE outcome IN ('CORRECT', 'INCORRECT') AND decision_seq IS NOT NULL;
CREATE INDEX decision_outcomes_waiting ON decision_outcomes (decision_id) WHERE decision_seq IS NULL;

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
