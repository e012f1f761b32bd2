// Package jsonedit owns byte-preserving edits of JSON documents that other
// tools wrote: a parse that keeps every value's byte span (parse.go), and
// edits that replace one value, add or remove one object member, or append
// one array element, laid out like their neighbours (edit.go), so that every
// byte outside the values changed stays as it was: blank lines, inline
// objects, key order, indentation and the final newline.
//
// orbit writes into files that belong to other tools (conductor's
// errors.json and metadata.json, Citadel's and CCW's loop records, Claude
// Code's settings); those tools, and the people who read their diffs, must
// see only the fields orbit changed.
package jsonedit
