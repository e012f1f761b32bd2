package hub

import "context"

// MigrateTo brings a store to an older schema version, to test what the
// next migrations do to its rows.
func (s *Store) MigrateTo(ctx context.Context, version int64) error { return s.migrateTo(ctx, version) }
