// Package mcpserver owns orbit's Model Context Protocol server (orbit mcp):
// the ORBIT protocol as tools an agent calls over stdio (record a decision
// or an outcome, work the pending queue, search precedents, read trust,
// stale decisions and the loop's status, match an error against the
// knowledge registry). It is a face like the CLI and the HTTP API: every
// tool parses its arguments and calls the same package function as the
// command it mirrors (the same validation, the same append under the
// journal's lock, the same sync), and answers with that command's --json
// form and a short text rendering. An error is a tool error carrying the
// command's one-line message; a refused call writes nothing.
package mcpserver
