# amk: the two entry points of the README's quick start, and a clean.
#   make run    check/install dependencies, build into build/, run the main job
#   make check  the same set-up, then the test suite in parallel, less the tests labelled
#               slow; at the end, each skipped test with its reason
#   make check-slow  the tests labelled slow (a second build, the network, nvcc; CI runs them)
#   make clean  remove build/
# Variables: BUILD (build directory, default build), CMAKE_ARGS (extra configure options,
# e.g. CMAKE_ARGS=-DAMK_WERROR=ON), JOBS (parallel build jobs), AMK_NO_INSTALL=1 (never
# install packages, only say which are missing).

BUILD ?= build
CMAKE_ARGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEPS_EXTRA ?=

.PHONY: run check check-slow ctest build deps clean

run: build
	./$(BUILD)/amk loop gemm --budget 200 --backend auto

# Optional: pandas (check_results_pandas) and a headless browser (cli_report_svg), installed
# when deps.sh may install; without them those tests skip and say why. The Python package's
# tests need the headers (python3-dev) and numpy.
check: DEPS_EXTRA += python3 python3-dev python3-numpy --optional python3-pandas chromium
check: build
	@$(MAKE) --no-print-directory ctest CTEST_LABELS="-LE slow"

check-slow:
	@$(MAKE) --no-print-directory ctest CTEST_LABELS="-L slow"

# ctest, then the skipped (and label-excluded) tests with their reasons; ctest's exit status.
ctest:
	@rm -f $(BUILD)/Testing/check.xml
	@rc=0; ctest --test-dir $(BUILD) -j$(JOBS) --output-on-failure $(CTEST_LABELS) \
	    --output-junit $(abspath $(BUILD))/Testing/check.xml || rc=$$?; \
	python3 scripts/test_skips.py $(BUILD)/Testing/check.xml $(BUILD) $(CTEST_LABELS); \
	exit $$rc

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@bash scripts/deps.sh $(DEPS_EXTRA)

clean:
	rm -rf $(BUILD)
