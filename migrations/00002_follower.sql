-- Schema v2: one follower for every append-only file. The sync state of each
-- (the decision and retrograde journals, the knowledge journal, the loop
-- events journal) is a journal_files row, and its rejected lines and remarks
-- are findings; the kinds belong to the packages that register them, so the
-- table no longer lists them. decisions_vocab, never read, is dropped.

-- +goose Up

-- Precedent search computes bm25 in Go from FTS5's own records: nothing
-- reads the vocabulary table.
DROP TABLE decisions_vocab;

-- SQLite cannot drop a CHECK constraint: journal_files is rebuilt with its
-- rows, the tables that reference it checked at commit.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE journal_files_v1 AS SELECT * FROM journal_files;
DROP TABLE journal_files;
-- kind is the Kind that reads the file: decisions, retro, knowledge,
-- loop-events.
CREATE TABLE journal_files (
    id            INTEGER PRIMARY KEY,
    path          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL,
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
INSERT INTO journal_files SELECT * FROM journal_files_v1;
DROP TABLE journal_files_v1;

-- The knowledge journal is followed like the others: its state moves from
-- knowledge_files to journal_files, and its events keep their line's text
-- (raw), which verify compares with the file and a rewritten past's
-- recovery file saves. The events are derived again from the file by the
-- next sync.
DROP TABLE knowledge_events;
DELETE FROM knowledge_files WHERE kind = 'journal';
CREATE TABLE knowledge_events (
    seq         INTEGER PRIMARY KEY,
    file_id     INTEGER NOT NULL REFERENCES journal_files (id),
    line        INTEGER NOT NULL,
    event       TEXT    NOT NULL CHECK (event IN ('hit', 'export', 'source')),
    path        TEXT    NOT NULL,
    entry_id    TEXT    NOT NULL DEFAULT '',
    ts          TEXT    NOT NULL DEFAULT '',
    day         TEXT    NOT NULL DEFAULT '',
    before_hash TEXT    NOT NULL DEFAULT '',
    after_hash  TEXT    NOT NULL DEFAULT '',
    raw         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX knowledge_events_path ON knowledge_events (event, path, seq);
CREATE INDEX knowledge_events_hits ON knowledge_events (path, entry_id, seq) WHERE event = 'hit';
CREATE INDEX knowledge_events_file ON knowledge_events (file_id, line);

-- +goose Down
-- journal_files stays without its CHECK (v1 writes only the kinds it
-- allowed); the files v1 does not follow leave it, and the knowledge
-- journal's events go back to knowledge_files, read again by v1's sync.
DELETE FROM findings WHERE file_id IN (SELECT id FROM journal_files WHERE kind NOT IN ('decisions', 'retro'));
DELETE FROM journal_files WHERE kind NOT IN ('decisions', 'retro');
DROP TABLE knowledge_events;
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
CREATE VIRTUAL TABLE decisions_vocab USING fts5vocab(decisions_fts, 'row');
