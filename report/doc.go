// Package report owns how orbit's answers look: tables for a terminal
// (tablewriter) and stable tab-separated lines for pipes, markdown, JSON and
// CSV renderings.
package report
