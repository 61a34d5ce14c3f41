# Harness — developer entry points. `make run` and `make test` are the two
# set-up commands; both provision what they can (see scripts/).

SHELL    := /bin/bash
GO       ?= go
BIN      := bin/harness
PKGS     := ./...
TESTLOG  := $(or $(TMPDIR),/tmp)/harness-test.log
BENCHLOG := $(or $(TMPDIR),/tmp)/harness-bench.log

.PHONY: all build run test bench lint fmt provision sandbox-image clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/harness

# Starts the TUI on the current directory: on a configured provider, else on
# the built-in demo model (with a banner saying how to configure one).
run: build
	@scripts/provision.sh run || true
	@$(BIN)

# Provisions what it can (Docker daemon, images, Postgres), runs every test
# with the race detector, then lists loudly every test that had to skip.
test:
	@scripts/provision.sh test
	@set -o pipefail; $(GO) test -race -count=1 $(PKGS) 2>&1 | tee $(TESTLOG)
	@scripts/skips.sh $(TESTLOG)

bench: build
	@scripts/provision.sh bench || true
	@set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS) 2>&1 | tee $(BENCHLOG)

lint:
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

provision:
	@scripts/provision.sh test

sandbox-image:
	@scripts/docker.sh && scripts/images.sh --force

clean:
	rm -rf bin
