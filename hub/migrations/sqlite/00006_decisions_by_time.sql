-- Decisions across projects are listed newest first by time (the
-- dashboard's main list, GET /api/v1/decisions?project=*): an index in that
-- order makes a page a walk of its rows, not a sort of every decision.

-- +goose Up
CREATE INDEX hub_decisions_time ON hub_decisions (coalesce(ts_ns, 0), project_id, byte_offset);

-- +goose Down
DROP INDEX hub_decisions_time;
