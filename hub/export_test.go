package hub

// PGRank lets the precedent evaluation try other rankings.
var PGRank = &pgRank

// PGIDF lets the evaluation measure the rank without idf.
var PGIDF = &pgIDF
