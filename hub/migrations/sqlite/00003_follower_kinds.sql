-- Every journal is named by its kind in the follower's registry (the loop
-- event journal was 'loops' on the hub, 'loop-events' in the follower): the
-- Go code says which kinds there are, the schema no longer lists them.
-- SQLite cannot drop a CHECK: hub_files is rebuilt, with foreign keys off
-- meanwhile (they cannot be switched inside a transaction), and checked
-- before the commit.

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE hub_files_new (
    project_id  TEXT   NOT NULL REFERENCES hub_projects (id),
    kind        TEXT   NOT NULL,
    path        TEXT   NOT NULL,
    acked_offset INTEGER NOT NULL DEFAULT 0,
    acked_lines INTEGER NOT NULL DEFAULT 0,
    tail        BLOB  NOT NULL DEFAULT x'',
    last_ts_ns  INTEGER NOT NULL DEFAULT 0,
    acked_at_ns INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, kind)
);
INSERT INTO hub_files_new (project_id, kind, path, acked_offset, acked_lines, tail, last_ts_ns, acked_at_ns)
    SELECT project_id, CASE kind WHEN 'loops' THEN 'loop-events' ELSE kind END, path, acked_offset, acked_lines, tail, last_ts_ns, acked_at_ns
    FROM hub_files;
DROP TABLE hub_files;
ALTER TABLE hub_files_new RENAME TO hub_files;
UPDATE hub_chunks SET kind = 'loop-events' WHERE kind = 'loops';
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE hub_files_old (
    project_id  TEXT   NOT NULL REFERENCES hub_projects (id),
    kind        TEXT   NOT NULL CHECK (kind IN ('decisions', 'retro', 'loops', 'knowledge')),
    path        TEXT   NOT NULL,
    acked_offset INTEGER NOT NULL DEFAULT 0,
    acked_lines INTEGER NOT NULL DEFAULT 0,
    tail        BLOB  NOT NULL DEFAULT x'',
    last_ts_ns  INTEGER NOT NULL DEFAULT 0,
    acked_at_ns INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, kind)
);
INSERT INTO hub_files_old (project_id, kind, path, acked_offset, acked_lines, tail, last_ts_ns, acked_at_ns)
    SELECT project_id, CASE kind WHEN 'loop-events' THEN 'loops' ELSE kind END, path, acked_offset, acked_lines, tail, last_ts_ns, acked_at_ns
    FROM hub_files;
DROP TABLE hub_files;
ALTER TABLE hub_files_old RENAME TO hub_files;
UPDATE hub_chunks SET kind = 'loops' WHERE kind = 'loop-events';
COMMIT;
PRAGMA foreign_keys = ON;
