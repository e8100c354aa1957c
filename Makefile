# Lectern: the two commands on a fresh machine are `make run` and `make test`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run test test-short bench bench-scale bench-scale-short lint build clean

## run: serve the embedded default (SQLite + in-memory cache under ./data, demo seed)
run:
	$(GO) run ./cmd/lectern serve

## build: a static binary in bin/lectern
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/lectern ./cmd/lectern

## test: every test; PostgreSQL/Redis tests skip when unreachable unless LECTERN_REQUIRE_SERVICES=1.
## The race detector changes allocation counts, so the allocation tests run again without it.
test:
	$(GO) test -race -count=1 ./...
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

## lint: gofmt, go vet, staticcheck
lint:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path './data/*')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin data
