# orbit: the README's first two commands are `make demo` and `make test`.
GO        ?= go
export CGO_ENABLED = 0
BIN       := bin/orbit

.PHONY: all build man demo test test-race test-browser fuzz reliability bench vet fmt clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/orbit

# Man pages generated from the command tree (cobra/doc), into man/; the
# generator is linked only into this build (-tags man), never into orbit.
man:
	$(GO) run -tags man ./cmd/orbit man --dir man

# Run the main job on the embedded sample data in a temporary project.
demo:
	$(GO) run ./cmd/orbit demo

# The test suite CI runs: unit and command tests, vet, gofmt, and a short
# pass of every fuzz target over its seed corpus. Well under 10 minutes on
# 2 cores. Tests that need a tool or server the machine lacks (jq, python3,
# PostgreSQL: ORBIT_TEST_POSTGRES, default the local one) skip, and the last
# lines say which and why.
test: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@log=$$(mktemp); ORBIT_SKIPLOG=$$log $(GO) test -count=1 ./...; st=$$?; \
	  if [ -s $$log ]; then echo "skipped $$(wc -l < $$log) tests (a tool or server is missing):"; \
	    cut -f2 $$log | sort | uniq -c | sed 's/^ */  /'; else echo "no test skipped"; fi; \
	  rm -f $$log; exit $$st

vet:
	$(GO) vet ./...

# Run every fuzz target in the module (go test -list finds them) for
# FUZZTIME each (default 30s); stops at the first failure.
FUZZTIME ?= 30s
fuzz:
	@set -e; targets=$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $$1 } \
	  /^(ok|\?)[ \t]/ { for (i = 0; i < n; i++) print $$2 "," t[i]; n = 0 }'); \
	  [ -n "$$targets" ] || { echo "no fuzz targets found"; exit 1; }; \
	  for pt in $$targets; do pkg=$${pt%%,*}; target=$${pt#*,}; \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	  done

# The reliability suite (reliability/, build tag reliability): builds the real
# binary and attacks it with parallel hooks, kill -9, a lost or broken index,
# tampering and the hostile corpus in testdata/bad, 20 projects pushing to two
# hub processes on PostgreSQL (ORBIT_TEST_POSTGRES) with pushers and a hub
# SIGKILLed (about 3.5 minutes), the security attacks (links, another user's
# project, prompt injection, FIFOs and waits, state numbers, loop records,
# control characters, orbit serve against DNS rebinding and floods; about
# 40 s; -run TestSecurity alone), then runs each fuzz target
# for FUZZTIME; writes RELIABILITY.md, which gives the run's duration (28
# minutes on 2 cores shared with a make test, 2026-12-01; the parallel hooks
# are most of it). RELFLAGS="-scale 0.1" for a quick pass.
reliability:
	$(GO) test -tags reliability -count=1 -timeout 60m -v ./reliability \
	  -fuzzfor $(FUZZTIME) -md $(CURDIR)/RELIABILITY.md $(RELFLAGS)

# The dashboard in headless Chromium (Debian's chromium package): builds
# orbit, serves demo projects, checks the charts, the alert banner and the
# Stop button, and saves screenshots to ORBIT_ARTIFACTS (default
# server/browser/testdata/artifacts/).
test-browser:
	$(GO) test -tags browser -count=1 -v ./server/browser/

# Benchmarks side by side with the peer tools; writes BENCHMARKS.md.
# BENCHFLAGS="-only import" runs one suite (its section is replaced);
# BENCHFLAGS=-quick smoke-tests the harness on 1k/10k journals.
bench:
	$(GO) run ./bench/cmd/orbit-bench -out BENCHMARKS.md $(BENCHFLAGS)

clean:
	rm -rf bin
