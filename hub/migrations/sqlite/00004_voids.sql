-- A decision recorded by mistake is voided by a line of the retrograde
-- journal {"ts", "decision_id", "void": true, "evidence"} (void false takes
-- it back), as in a project's index (its migration 4): the decision's line
-- stays; a voided decision counts in no trust figure, is no precedent and
-- is never stale.

-- +goose Up
-- Void events, keyed by where the line stands, like hub_events.
CREATE TABLE hub_voids (
    project_id  TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    byte_offset INTEGER  NOT NULL,
    decision_id TEXT    NOT NULL,
    void        INTEGER NOT NULL CHECK (void IN (0, 1)),
    at_ns       INTEGER  NOT NULL,
    line        INTEGER  NOT NULL,
    ts          TEXT    NOT NULL DEFAULT '',
    evidence    TEXT    NOT NULL,
    PRIMARY KEY (project_id, kind, byte_offset)
);
-- Each decision's current void: its latest void event in (at_ns, line)
-- order. A voided decision's current outcome keeps its outcome but loses
-- its decision_offset, so trust stops counting it.
CREATE TABLE hub_decision_voids (
    project_id  TEXT    NOT NULL,
    decision_id TEXT    NOT NULL,
    void        INTEGER NOT NULL,
    at_ns       INTEGER  NOT NULL,
    line        INTEGER  NOT NULL,
    ts          TEXT    NOT NULL DEFAULT '',
    evidence    TEXT    NOT NULL,
    PRIMARY KEY (project_id, decision_id)
);

-- +goose Down
-- The outcomes of voided decisions count again.
UPDATE hub_outcomes SET decision_offset = (SELECT d.byte_offset FROM hub_decisions d
        WHERE d.project_id = hub_outcomes.project_id AND d.id = hub_outcomes.decision_id)
    WHERE decision_offset IS NULL;
DROP TABLE hub_decision_voids;
DROP TABLE hub_voids;
