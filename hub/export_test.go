package hub

import "context"

// PGRank lets the precedent evaluation try other rankings.
var PGRank = &pgRank

// PGIDF lets the evaluation measure the rank without idf.
var PGIDF = &pgIDF

// MigrateTo brings a store to an older schema version, to test what the
// next migrations do to its rows.
func (s *Store) MigrateTo(ctx context.Context, version int64) error { return s.migrateTo(ctx, version) }
