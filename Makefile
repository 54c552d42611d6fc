# amk: the two entry points of the README's quick start, and a clean.
#   make run    check/install dependencies, build into build/, run the main job
#   make check  the same set-up, then the whole test suite
#   make clean  remove build/
# Variables: BUILD (build directory, default build), CMAKE_ARGS (extra configure options,
# e.g. CMAKE_ARGS=-DAMK_WERROR=ON), JOBS (parallel build jobs), AMK_NO_INSTALL=1 (never
# install packages, only say which are missing).

BUILD ?= build
CMAKE_ARGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEPS_EXTRA ?=

.PHONY: run check build deps clean

run: build
	./$(BUILD)/amk loop gemm --budget 200 --backend auto

check: DEPS_EXTRA += python3 python3-dev python3-numpy python3-pandas
check: build
	ctest --test-dir $(BUILD) --output-on-failure

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@bash scripts/deps.sh $(DEPS_EXTRA)

clean:
	rm -rf $(BUILD)
