-- Schema v3: the loop events journal (.claude/orbit-loop-events.jsonl) is
-- followed like the others. Its sync state is a journal_files row instead of
-- the end offset of its last indexed line, and each event names its file,
-- so that the follower compares a file's events with it line by line and
-- resets them when its past changed. The loops and their events are derived
-- again from the file by the next sync.

-- +goose Up
DROP TABLE loop_events;
DELETE FROM loops;
-- One row per event line of the loop events journal.
CREATE TABLE loop_events (
    seq           INTEGER PRIMARY KEY,
    file_id       INTEGER NOT NULL REFERENCES journal_files (id),
    loop_ref      INTEGER NOT NULL REFERENCES loops (id),
    line          INTEGER NOT NULL,
    at            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    status        TEXT    NOT NULL DEFAULT '',
    native_status TEXT    NOT NULL DEFAULT '',
    detail        TEXT    NOT NULL DEFAULT '',
    raw           TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX loop_events_loop ON loop_events (loop_ref, seq);
CREATE INDEX loop_events_file ON loop_events (file_id, line);

-- +goose Down
DELETE FROM findings WHERE file_id IN (SELECT id FROM journal_files WHERE kind = 'loop-events');
DELETE FROM journal_files WHERE kind = 'loop-events';
DROP TABLE loop_events;
DELETE FROM loops;
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
