# orbit: the README's first two commands are `make demo` and `make test`.
GO        ?= go
export CGO_ENABLED = 0
BIN       := bin/orbit

.PHONY: all build demo test test-race fuzz bench vet fmt clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/orbit

# Run the main job on the embedded sample data in a temporary project.
demo:
	$(GO) run ./cmd/orbit demo

# The test suite CI runs: unit and command tests, vet, gofmt, and a short
# pass of every fuzz target over its seed corpus. Well under 10 minutes on
# 2 cores.
test: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

# Run each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./journal -run '^$$' -fuzz '^FuzzReadRecords$$' -fuzztime $(FUZZTIME)
	$(GO) test ./journal -run '^$$' -fuzz '^FuzzDecodeMatchesEncodingJSON$$' -fuzztime $(FUZZTIME)

# Benchmarks side by side with the peer tools; writes BENCHMARKS.md.
# BENCHFLAGS="-only import" runs one suite (its section is replaced);
# BENCHFLAGS=-quick smoke-tests the harness on 1k/10k journals.
bench:
	$(GO) run ./bench/cmd/orbit-bench -out BENCHMARKS.md $(BENCHFLAGS)

clean:
	rm -rf bin
