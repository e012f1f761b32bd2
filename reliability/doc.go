// Package reliability proves orbit's promise with the real binary: every
// decision orbit acknowledged is in the journal and the index, whatever
// happens around it, and every bad input gets a clear error while nothing else
// is lost. Its tests attack a freshly built orbit with parallel hooks, kill -9,
// a lost or broken index, a tampered journal, a hostile input corpus
// (testdata/bad), a fleet of projects pushing to two hub processes on
// PostgreSQL with pushers and a hub killed, the security attacks of a
// hostile checkout, another user, a web page and the network
// (security_test.go), and the fuzz targets, and write RELIABILITY.md. They sit
// behind the build tag reliability, so that `go test ./...` stays quick:
// `make reliability` runs them.
package reliability
