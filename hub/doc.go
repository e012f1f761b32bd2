// Package hub owns orbit's fleet store: the one place many projects, on many
// machines, push their journals to (`orbit push`), and the API and dashboard
// over all of them (`orbit serve --store postgres://…` or `sqlite:PATH`).
//
// The hub is one more index derived from the journals, fed one way: each
// machine keeps its own append-only files as the truth, and ships the
// chunks appended since the hub last acknowledged them, by file and byte
// offset. The hub keys every record by (project, file kind, where it stands
// in its file), so a repeated or interrupted push never duplicates or loses
// one, and acknowledges an offset only in the transaction that stored what
// lies before it. Hub processes keep no state of their own: several can
// serve one PostgreSQL.
//
// Every row carries its project and every query names the projects the
// caller may see: a project's token reads and pushes that project only.
package hub
