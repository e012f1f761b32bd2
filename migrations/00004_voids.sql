-- Schema v4: a decision recorded by mistake is voided by an event, a line of
-- the retrograde journal {"ts", "decision_id", "void": true, "evidence"}
-- (void false takes it back). The decision's line stays in the journal; a
-- voided decision counts in no trust figure, is no precedent and is never
-- stale.

-- +goose Up
-- Void events, append-only, in file order like outcome_events; ordered by
-- (at_ns, line): the event time (the line's ts, or the last valid ts before
-- it in the same file), then the line.
CREATE TABLE void_events (
    seq         INTEGER PRIMARY KEY,
    decision_id TEXT    NOT NULL,
    void        INTEGER NOT NULL CHECK (void IN (0, 1)),
    at_ns       INTEGER NOT NULL,
    ts          TEXT    NOT NULL DEFAULT '',
    evidence    TEXT    NOT NULL,
    file_id     INTEGER NOT NULL REFERENCES journal_files (id),
    line        INTEGER NOT NULL,
    raw         TEXT    NOT NULL
);
CREATE INDEX void_events_decision ON void_events (decision_id, at_ns, line);
CREATE INDEX void_events_file ON void_events (file_id, line);
-- The current void of every decision that has a void event: its latest.
-- A voided decision's current outcome (decision_outcomes) keeps its outcome
-- but loses its decision_seq, so the totals' triggers stop counting it.
CREATE TABLE decision_voids (
    decision_id TEXT    PRIMARY KEY,
    void        INTEGER NOT NULL,
    event_seq   INTEGER NOT NULL,
    at_ns       INTEGER NOT NULL,
    line        INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
-- Outcomes of voided decisions count again; the void lines, which v3 does
-- not read, make the next sync compare the retrograde journal line by line
-- and index it again (rejecting them).
UPDATE decision_outcomes SET decision_seq = (SELECT d.seq FROM decisions d WHERE d.id = decision_outcomes.decision_id)
    WHERE decision_seq IS NULL AND decision_id IN (SELECT decision_id FROM decision_voids);
UPDATE journal_files SET tail_hash = 'past-changed' WHERE id IN (SELECT file_id FROM void_events);
DROP TABLE decision_voids;
DROP TABLE void_events;
