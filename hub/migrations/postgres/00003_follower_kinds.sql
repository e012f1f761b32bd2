-- Every journal is named by its kind in the follower's registry (the loop
-- event journal was 'loops' on the hub, 'loop-events' in the follower): the
-- Go code says which kinds there are, the schema no longer lists them.

-- +goose Up
ALTER TABLE hub_chunks DROP CONSTRAINT hub_chunks_project_id_kind_fkey;
ALTER TABLE hub_files DROP CONSTRAINT hub_files_kind_check;
UPDATE hub_files SET kind = 'loop-events' WHERE kind = 'loops';
UPDATE hub_chunks SET kind = 'loop-events' WHERE kind = 'loops';
ALTER TABLE hub_chunks ADD CONSTRAINT hub_chunks_project_id_kind_fkey
    FOREIGN KEY (project_id, kind) REFERENCES hub_files (project_id, kind);

-- +goose Down
ALTER TABLE hub_chunks DROP CONSTRAINT hub_chunks_project_id_kind_fkey;
UPDATE hub_files SET kind = 'loops' WHERE kind = 'loop-events';
UPDATE hub_chunks SET kind = 'loops' WHERE kind = 'loop-events';
ALTER TABLE hub_files ADD CONSTRAINT hub_files_kind_check CHECK (kind IN ('decisions', 'retro', 'loops', 'knowledge'));
ALTER TABLE hub_chunks ADD CONSTRAINT hub_chunks_project_id_kind_fkey
    FOREIGN KEY (project_id, kind) REFERENCES hub_files (project_id, kind);
