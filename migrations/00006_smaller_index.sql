-- Schema v6: a smaller index, each decision's text still in it (the recovery
-- file of a rewritten past is written from the index's copy). Three cuts:
--
-- 1. The full-text index keeps no per-row lengths (FTS5's columnsize=0, no
--    decisions_fts_docsize table): precedent search counts a row's tokens
--    itself from the text it reads to score it, and takes the totals from
--    FTS5's averages record, which columnsize=0 still keeps.
-- 2. The indexes on category, iteration and verification no longer name seq:
--    every index entry ends with the rowid (seq) already, so (category, seq)
--    stored it twice; the order of the entries is the same.
-- 3. ts is kept as text (ts_text) only when it is not the canonical UTC
--    rendering of ts_ns (YYYY-MM-DDTHH:MM:SSZ, what orbit and synth write);
--    otherwise ts_text is empty and ts, a virtual column, renders it, byte
--    for byte as the row was compared with when it was indexed (a ts that is
--    absent or unparsed has no ts_ns and keeps its text).

-- +goose Up
DROP TABLE decisions_fts;
CREATE VIRTUAL TABLE decisions_fts USING fts5(
    input, reason, next_action, context,
    content = 'decisions',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2',
    detail = column,
    columnsize = 0
);
INSERT INTO decisions_fts (decisions_fts) VALUES ('rebuild');

DROP INDEX decisions_category;
CREATE INDEX decisions_category ON decisions (category);
DROP INDEX decisions_iteration;
CREATE INDEX decisions_iteration ON decisions (iteration);
DROP INDEX decisions_verification;
CREATE INDEX decisions_verification ON decisions (verification) WHERE verification <> 'PENDING';

ALTER TABLE decisions RENAME COLUMN ts TO ts_text;
ALTER TABLE decisions ADD COLUMN ts TEXT GENERATED ALWAYS AS (
    iif(ts_text = '' AND ts_ns IS NOT NULL, strftime('%Y-%m-%dT%H:%M:%SZ', ts_ns / 1000000000, 'unixepoch'), ts_text)) VIRTUAL;
UPDATE decisions SET ts_text = ''
WHERE ts_ns IS NOT NULL AND ts_text = strftime('%Y-%m-%dT%H:%M:%SZ', ts_ns / 1000000000, 'unixepoch');

-- +goose Down
UPDATE decisions SET ts_text = ts WHERE ts_text = '';
ALTER TABLE decisions DROP COLUMN ts;
ALTER TABLE decisions RENAME COLUMN ts_text TO ts;

DROP INDEX decisions_verification;
CREATE INDEX decisions_verification ON decisions (verification, seq) WHERE verification <> 'PENDING';
DROP INDEX decisions_iteration;
CREATE INDEX decisions_iteration ON decisions (iteration, seq);
DROP INDEX decisions_category;
CREATE INDEX decisions_category ON decisions (category, seq);

DROP TABLE decisions_fts;
CREATE VIRTUAL TABLE decisions_fts USING fts5(
    input, reason, next_action, context,
    content = 'decisions',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2',
    detail = column
);
INSERT INTO decisions_fts (decisions_fts) VALUES ('rebuild');
