# Harness — developer entry points. `make run` and `make test` are the two
# set-up commands; both provision what they can (see scripts/).

SHELL    := /bin/bash
GO       ?= go
BIN      := bin/harness
PKGS     := ./...
TESTLOG  := $(or $(TMPDIR),/tmp)/harness-test.log
TESTJSON := $(or $(TMPDIR),/tmp)/harness-test.json
BENCHLOG := $(or $(TMPDIR),/tmp)/harness-bench.log
# make bench BENCHTIME=1x runs each benchmark once: CI's smoke run.
BENCHTIME ?= 1s
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ERRCHECK    := github.com/kisielk/errcheck@v1.30.0
GREMLINS    := github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
# make mutate MUTATE=./tools runs one package.
MUTATE      ?= ./tools ./compaction ./internal/checkpoint ./internal/event

.PHONY: all build install run test bench lint fmt provision sandbox-image clean mutate

all: build

# Symbols and DWARF stripped (-s -w) and build paths trimmed: the binary is
# about a third smaller; panics still print file:line stacks. Linked
# statically (CGO_ENABLED=0: Go's own DNS resolver and user lookup): no
# dynamic loader and no libc start-up, 2 ms off every start.
# The version and commit are set in internal/version, which then answers
# `harness --version` before the other packages' init runs.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c+dirty; })
VPKG    := github.com/harness-dev/harness/internal/version
LDFLAGS := -s -w -X $(VPKG).version=$(VERSION) -X $(VPKG).commit=$(COMMIT)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/harness

# Puts harness on PATH (the quit hint prints `harness resume <id>`):
# PREFIX/bin, by default ~/.local/bin; `make install PREFIX=/usr/local` as
# root for every user.
PREFIX ?= $(HOME)/.local
install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/harness
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on your PATH; add it (e.g. in ~/.profile): export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

# Starts the TUI on the current directory: on a configured provider, else on
# the built-in demo model (with a banner saying how to configure one).
run: build
	@scripts/provision.sh run || true
	@$(BIN)

# Provisions what it can (Docker daemon, images, Postgres), runs every test
# with the race detector, then lists loudly every test that skipped. The log
# is read from `go test -json` (scripts/testreport): one line per package, the
# output of failed tests, every skip with its reason, and a closing
# "N passed, N failed" line; the raw JSON stays in $(TESTJSON).
test:
	@scripts/provision.sh test
	@$(GO) build -o bin/testreport ./scripts/testreport
	@set -o pipefail; $(GO) test -json -race -count=1 $(PKGS) 2>&1 | bin/testreport -log $(TESTLOG) -json $(TESTJSON)

# The benchmarks build what they run (cmd/harness's its own binary). They
# are linked as make build links (CGO_ENABLED=0), which also lets a cold
# run reuse what the tests' static harness binary compiled.
bench:
	@scripts/provision.sh bench || true
	@set -o pipefail; CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchtime=$(BENCHTIME) -benchmem -timeout 45m -count=1 $(PKGS) 2>&1 | tee $(BENCHLOG)

# go vet, staticcheck, and errcheck (staticcheck has no unchecked-error
# check of its own), both at a pinned version. errcheck skips test files and
# the calls scripts/errcheck-excludes.txt lists (terminal prints, closing
# what was only read), each for the reason given there.
lint:
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(ERRCHECK) -ignoretests -exclude scripts/errcheck-excludes.txt $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

provision:
	@scripts/provision.sh test

# make sandbox-image IMAGE_PACKAGES="golang nodejs" [IMAGE=name]: the
# sandbox image with more Debian packages (scripts/images.sh).
sandbox-image:
	@scripts/docker.sh && IMAGE="$(IMAGE)" IMAGE_PACKAGES="$(IMAGE_PACKAGES)" scripts/images.sh --force $(if $(IMAGE_PACKAGES),sandbox,all)

clean:
	rm -rf bin

# Mutation testing (gremlins), one package at a time: every covered mutant
# of the code is built and the package's tests run against it; a mutant
# they do not catch (LIVED) is a rule no test states. Slow (minutes per
# package), so not part of `make test` or CI. Reports the efficacy (killed
# / covered) per package.
mutate:
	@for p in $(MUTATE); do echo "== $$p"; $(GO) run $(GREMLINS) unleash --workers 2 --timeout-coefficient 10 $$p | grep -E 'LIVED|TIMED OUT|Killed:|Test efficacy|Mutator coverage' || exit 1; done
