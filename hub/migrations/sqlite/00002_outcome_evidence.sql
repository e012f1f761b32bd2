-- The current outcome's own ts and evidence, so that every read shows why a
-- decision was judged as it was (the decision's one JSON form).

-- +goose Up
ALTER TABLE hub_outcomes ADD COLUMN ts TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_outcomes ADD COLUMN evidence TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE hub_outcomes DROP COLUMN evidence;
ALTER TABLE hub_outcomes DROP COLUMN ts;
