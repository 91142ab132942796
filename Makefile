# Set-up and everyday commands. `make run` and `make test` install what they need first.
SHELL := /bin/bash
NPM ?= npm
ARGS ?=

.PHONY: install build run test lint typecheck bench clean

# node_modules is rebuilt whenever the lock file changes.
node_modules/.installed: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund --loglevel=error
	touch $@

install: node_modules/.installed

build: install
	$(NPM) run --silent build

run: build
	node dist/src/cli.js $(ARGS)

typecheck: install
	$(NPM) run --silent typecheck

lint: install
	$(NPM) run --silent lint

test: install typecheck lint
	$(NPM) run --silent test

bench: build
	node dist/bench/run.js $(ARGS)

clean:
	rm -rf dist node_modules
