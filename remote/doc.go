// Package remote owns the client side of a hub: the hubs a project pushes
// to (.claude/orbit-remotes.json), where their tokens come from (the
// environment or a file only its owner can read, never a command line or a
// journal), and `orbit push`, which ships each journal's chunks from the
// byte offset the hub acknowledged, holding back a journal whose past was
// rewritten.
package remote
