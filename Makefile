# Pronghorn — one entry point for developers, CI and operators.
#   make dev    install, migrate, serve on http://127.0.0.1:2026 (reload on code changes)
#   make test   everything CI runs (the README's test command; .ci/run calls it)

SHELL := /bin/bash
.DEFAULT_GOAL := help

BACKEND  := backend
FRONTEND := frontend
UV       ?= $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
HOST     ?= 127.0.0.1
PORT     ?= 2026
APT_GET  := DEBIAN_FRONTEND=noninteractive apt-get
# Backend test workers (pytest-xdist): two more than the CPUs by default, since many tests
# wait on a server process, a lease or a timer and the extra workers fill that idle CPU (on
# 2 cores, 2026-12-02: 157-178 s with 4 workers, 176-180 s with 3, 183 s with 6);
# PYTEST_WORKERS=0 runs serially. Each test module runs whole on one worker
# (--dist loadscope), so module fixtures are shared.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 2 )))
# Bytecode of the tests, the gateway and its dependencies is cached outside the tree: with
# PYTHONDONTWRITEBYTECODE (as CI sets it) every pytest worker and server subprocess would
# compile all of it again (~15 s of CPU per worker). tests/support/live.py uses the same one.
PYCACHE ?= $(or $(TMPDIR),/tmp)/pronghorn-tests-pycache
TEST_ENV := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(PYCACHE)
# Compose v2 (`docker compose`) when installed, else Debian's docker-compose (1.29). Run from
# docker/, where the compose file's relative paths resolve for both. BuildKit builds the image
# (its CA-bundle secret); compose 1.29 needs COMPOSE_DOCKER_CLI_BUILD for it.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
COMPOSE_RUN := cd docker && DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1 $(COMPOSE) -p pronghorn

.PHONY: help install install-uv install-backend install-frontend install-system ui \
        install-browser test-smoke test-containers offline-images \
        dev dev-ui serve migrate test test-backend test-frontend lint typecheck deadcode fmt config \
        docker-build up down logs doctor bench bench-cluster clean

help: ## Show the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

install: install-uv install-backend install-system install-frontend ## Install everything (uv, Python deps, UI build, bubblewrap)

install-uv:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv

install-backend: install-uv
	cd $(BACKEND) && $(UV) sync --frozen

# bubblewrap isolates agent commands; install it when we can (root on Debian/Ubuntu).
install-system:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing bubblewrap (agent command sandbox)"; \
		($(APT_GET) install -y -qq bubblewrap >/dev/null 2>&1 || \
		 ($(APT_GET) update -qq >/dev/null && $(APT_GET) install -y -qq bubblewrap >/dev/null)) || \
		echo "warning: could not install bubblewrap; agent commands will run without isolation"; \
	else \
		echo "note: install bubblewrap (e.g. 'sudo apt-get install bubblewrap') to isolate agent commands"; \
	fi

install-frontend:
	@if command -v npm >/dev/null 2>&1; then \
		cd $(FRONTEND) && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }; \
	else echo "note: npm not found; the web UI will not be built"; fi
	@$(MAKE) --no-print-directory ui

# Rebuild the UI only when its sources changed since the last build.
ui:
	@if command -v npm >/dev/null 2>&1 && [ -d $(FRONTEND)/node_modules ]; then \
		if [ ! -f $(FRONTEND)/dist/index.html ] || \
		   [ -n "$$(find $(FRONTEND)/src $(FRONTEND)/index.html $(FRONTEND)/package.json $(FRONTEND)/vite.config.ts -newer $(FRONTEND)/dist/index.html 2>/dev/null | head -1)" ]; then \
			echo "building the web UI"; cd $(FRONTEND) && npm run --silent build; \
		fi; \
	fi

migrate: install-backend ## Create or upgrade the database schema
	$(UV) run --project $(BACKEND) pronghorn migrate

dev: install ## Install, migrate and serve with reload on http://127.0.0.1:2026
	$(UV) run --project $(BACKEND) pronghorn migrate
	$(UV) run --project $(BACKEND) pronghorn serve --host $(HOST) --port $(PORT) --reload

serve: install-backend ## Serve without reload
	$(UV) run --project $(BACKEND) pronghorn serve --host $(HOST) --port $(PORT)

dev-ui: install-frontend ## Vite dev server with a proxy to the gateway on :2026
	cd $(FRONTEND) && npm run dev

test: install test-backend test-frontend test-smoke test-containers ## Everything CI runs
	@cd $(BACKEND) && $(UV) run python tests/support/docker_engine.py --stop

# Browser tests drive Debian's Chromium (never a downloaded browser).
install-browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium for the browser tests"; \
		($(APT_GET) install -y -qq chromium >/dev/null 2>&1 || \
		 ($(APT_GET) update -qq >/dev/null && $(APT_GET) install -y -qq chromium >/dev/null)); \
	else echo "note: install Debian's chromium to run the browser tests"; fi

test-backend: install-backend install-system install-browser
	cd $(BACKEND) && $(UV) run ruff check src tests && $(UV) run ruff format --check src tests
	@$(MAKE) --no-print-directory typecheck
	@$(MAKE) --no-print-directory deadcode
	@# The Docker engine and the sandbox image of the container-sandbox tests, made before
	@# pytest (a cold build takes minutes: more than one test's timeout); seconds when cached.
	cd $(BACKEND) && $(UV) run python tests/support/docker_engine.py
	cd $(BACKEND) && $(TEST_ENV) $(UV) run pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadscope \
		--ignore=tests/containers

# The compose stacks for real (backend/tests/containers): a Docker engine (installed and
# started when missing, stopped at the end only if started here), the images built offline
# from Debian packages (scripts/offline-images: cached, seconds when warm), then the default
# and scale profiles. One module at a time: each stack is several containers.
test-containers: install-backend install-frontend
	cd $(BACKEND) && $(TEST_ENV) $(UV) run pytest tests/containers -q -p no:cacheprovider -n 0 -rs

test-frontend: install-frontend
	@if command -v npm >/dev/null 2>&1; then \
		cd $(FRONTEND) && npm run --silent lint && npm run --silent typecheck && npm test --silent && \
		npm run --silent check:initial-js; \
	else echo "npm not found: skipping frontend checks"; exit 1; fi

# The container's exact start command, outside Docker: a real chat, then SIGTERM.
test-smoke: install-backend
	$(TEST_ENV) $(UV) run --project $(BACKEND) python scripts/smoke

lint: install-backend ## Lint Python and TypeScript
	cd $(BACKEND) && $(UV) run ruff check src tests && $(UV) run ruff format --check src tests
	@if [ -d $(FRONTEND)/node_modules ]; then cd $(FRONTEND) && npm run --silent lint; fi
	@$(MAKE) --no-print-directory deadcode

# basedpyright (pyright's checker; its node comes from a wheel, so nothing is downloaded):
# strict on the packages listed in backend/pyproject.toml, basic on the rest of src/. `-p` pins
# the config to ours (pyright would prefer a stray pyrightconfig.json in a parent folder).
typecheck: install-backend ## Type check the backend
	cd $(BACKEND) && $(UV) run basedpyright -p pyproject.toml

# vulture over backend/src (a few seconds, no imports run): unused functions, classes,
# methods and variables. Configured in [tool.vulture] in backend/pyproject.toml (framework
# hooks); names used where vulture cannot see go in backend/deadcode_whitelist.py.
deadcode: install-backend ## Report unused Python code (vulture)
	cd $(BACKEND) && $(UV) run vulture

fmt: install-backend ## Format Python code
	cd $(BACKEND) && $(UV) run ruff check --fix src tests && $(UV) run ruff format src tests

config: ## Copy config.example.yaml to config.yaml if absent
	@[ -f config.yaml ] && echo "config.yaml exists" || (cp config.example.yaml config.yaml && echo "wrote config.yaml")

doctor: install-backend ## Check config, database, sandbox and UI
	$(UV) run --project $(BACKEND) pronghorn doctor

bench: install-backend ## Run the benchmark (loopback only, bounded)
	cd $(BACKEND) && $(UV) run python ../scripts/bench

bench-cluster: install-backend ## Benchmark 1, 2 and 4 processes on PostgreSQL + Redis (local)
	cd $(BACKEND) && $(UV) run python ../scripts/bench --cluster

docker-build: ## Build the image
	DOCKER_BUILDKIT=1 docker build -f docker/Dockerfile -t pronghorn:local .

offline-images: ## Build the image and the compose bases from Debian packages (no registry)
	scripts/offline-images --tag pronghorn:local

up: config ## docker compose up -d (writes config.yaml and .env first if absent)
	@[ -f .env ] || (cp .env.example .env && chmod 600 .env && echo "wrote .env")
	$(COMPOSE_RUN) up -d --build

down: ## docker compose down
	$(COMPOSE_RUN) down

logs: ## Follow the gateway logs
	$(COMPOSE_RUN) logs -f gateway

clean: ## Remove local data and build output
	rm -rf .pronghorn $(FRONTEND)/dist
