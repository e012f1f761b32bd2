-- Precedent search ranks as a project's own search does (precedent.Score:
-- bm25 in Go over a bounded pool of the newest decisions holding each query
-- word). On SQLite the hub's FTS5 index has what it needs (seq is the rowid,
-- the averages record bm25's totals); one project's newest holders are found
-- by (project_id, seq), and the token counters are kept as on PostgreSQL so
-- that both schemas stay one.

-- +goose Up
CREATE INDEX hub_decisions_project_seq ON hub_decisions (project_id, seq);
ALTER TABLE hub_projects ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hub_projects ADD COLUMN tokened INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE hub_projects DROP COLUMN tokened;
ALTER TABLE hub_projects DROP COLUMN tokens;
DROP INDEX hub_decisions_project_seq;
