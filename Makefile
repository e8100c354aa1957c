# Lectern: the two commands on a fresh machine are `make run` and `make test`.
GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run test test-short bench lint build clean

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

## lint: gofmt, go vet, staticcheck
lint:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path './data/*')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin data
