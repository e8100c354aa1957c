# Lectern: the two commands on a fresh machine are `make run` and `make test`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The OpenAPI linter, from the npm registry at an exact version (needs
# Node.js 20 or later and npx).
REDOCLY     ?= @redocly/cli@2.77.0

.PHONY: run test test-short bench bench-scale bench-scale-short faults faults-short lint lint-openapi build clean

## run: serve the embedded default (SQLite + in-memory cache under ./data, demo seed)
run:
	$(GO) run ./cmd/lectern serve

## build: a static binary in bin/lectern
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/lectern ./cmd/lectern

## test: every test; PostgreSQL/Redis tests skip when unreachable unless LECTERN_REQUIRE_SERVICES=1.
## The race detector changes allocation counts, so the allocation tests run again without it.
## integration/ alone takes about ten minutes under the race detector on two shared cores,
## go test's default limit per package: hence -timeout.
test:
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 -run 'NotAllocate' ./authserver/keys/

## bench: Go benchmarks, then the load generator against a server on PostgreSQL + Redis
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
	scripts/bench-load.sh

## bench-scale: 10, 1,000 and 10,000 sites on PostgreSQL + Redis: import, start-up, memory, latency (docs/SCALE.md)
bench-scale:
	scripts/bench-scale.sh

## bench-scale-short: the CI subset of bench-scale (10 and 200 sites, a few seconds)
bench-scale-short:
	BENCH_SCALE_SHORT=1 scripts/bench-scale.sh

## faults: every fault scenario against its own PostgreSQL, Redis and lectern serve (docs/RELIABILITY.md);
## needs /usr/lib/postgresql/15/bin, redis-server, redis-sentinel, nginx; ports 33000-33999
faults: build
	$(GO) run ./cmd/lectern-faults --bin bin/lectern --out faults-report.md

## faults-short: the CI subset of faults (Redis SIGKILL, PostgreSQL restart, code race, rolling restart behind nginx)
faults-short: build
	$(GO) run ./cmd/lectern-faults --bin bin/lectern --short

## lint: gofmt, go vet, staticcheck, and the OpenAPI document (lint-openapi)
lint: lint-openapi
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path './data/*')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## lint-openapi: Redocly's linter on adminapi/openapi.yaml (rules: redocly.yaml).
## Without npx it is skipped with a notice, except in CI (CI set), where
## .ci/run provides Node.js and a missing npx is an error.
lint-openapi:
	@if command -v npx >/dev/null 2>&1; then \
		echo "npx $(REDOCLY) lint adminapi/openapi.yaml"; \
		REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --yes $(REDOCLY) lint --config redocly.yaml adminapi/openapi.yaml; \
	elif [ -n "$$CI" ]; then \
		echo "lint-openapi: npx (Node.js 20 or later) is required in CI"; exit 1; \
	else \
		echo "lint-openapi: skipped, npx (Node.js 20 or later) not found; CI runs it"; \
	fi

clean:
	rm -rf bin data
