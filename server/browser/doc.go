// Package browser holds the dashboard's end-to-end test: it builds orbit,
// runs `orbit serve` on demo projects and drives headless Chromium through
// the dashboard. It runs only with the build tag `browser`:
//
//	go test -tags browser ./server/browser/    (make test-browser)
//
// Screenshots go to $ORBIT_ARTIFACTS (default testdata/artifacts/).
package browser
