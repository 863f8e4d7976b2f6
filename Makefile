# sitemap-audit: two commands on a fresh machine, `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test test-deps lint demo bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,fast,cluster,render]'
	touch $(STAMP)

install: $(STAMP)

# Headless Chromium renders the HTML report in one test and every `crawl --render` test,
# and nginx serves the static
# sites of the nightly-audit tests; install them where we can (root with apt-get, as on
# CI), otherwise those tests are skipped with a reason.
test-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	{ command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } || missing="$$missing nginx"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian$$missing for the browser and static-site tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
			|| echo "$$missing could not be installed; their tests will be skipped"; \
	fi

test: $(STAMP) test-deps
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check audit tests bench scripts
	$(BIN)/ruff format --check audit tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/complexity.py --max-mean 3.2 audit
	$(BIN)/python scripts/house.py --max-used-once 0.5 audit

demo: $(STAMP)
	$(BIN)/python -m audit.cli.demo

bench: $(STAMP)
	$(BIN)/python -m bench.suites.run
	# the restructure (issue 15) side by side with the commit before it, in one run
	$(BIN)/python -m bench.suites.versus --base c914850 --repeats 5
	# lastmod over time (issue 20): a --state --page-checks crawl run twice, and the state file
	$(BIN)/python -m bench.suites.content_cost --pages 100000
	# crawl --links and --page-checks (issue 18): 100,000 linked pages on nginx against a bare
	# aiohttp+lxml loop and advertools, side by side; a 1,000,000-page link crawl's peak memory
	$(BIN)/python -m bench.suites.links
	# crawl --render (issue 31): pages rendered per second and the process tree's peak memory
	# for 200 pages at 1, 2 and 4 tabs, beside the same crawl without rendering
	$(BIN)/python -m bench.suites.render --pages 200 --tabs 1,2,4
	# many sites at once (issue 27): K loopback hosts x N pages at --rate R in one process,
	# --cluster local:4 and a scheduler with two workers (plain `dask worker`s and
	# `sitemap-audit worker`s), against the ideal N/R
	$(BIN)/python -m bench.suites.cluster --shapes 100x500,8x2500 --rate 50

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
