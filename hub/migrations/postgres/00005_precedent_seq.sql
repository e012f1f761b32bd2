-- Precedent search ranks as a project's own search does (precedent.Score:
-- bm25 in Go over a bounded pool of the newest decisions holding each query
-- word), so the hub needs what an FTS5 index has: an order of decisions
-- across projects (seq, newer is higher, as SQLite's rowid), indexed for the
-- fleet and for one project, and bm25's average document length, kept by the
-- push transaction as each project's token total over the decisions counted
-- (tokened: the decisions pushed before this migration are not counted).

-- +goose Up
ALTER TABLE hub_decisions ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE INDEX hub_decisions_seq ON hub_decisions (seq);
CREATE INDEX hub_decisions_project_seq ON hub_decisions (project_id, seq);
ALTER TABLE hub_projects ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE hub_projects ADD COLUMN tokened BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE hub_projects DROP COLUMN tokened;
ALTER TABLE hub_projects DROP COLUMN tokens;
DROP INDEX hub_decisions_project_seq;
DROP INDEX hub_decisions_seq;
ALTER TABLE hub_decisions DROP COLUMN seq;
