# Eddy: the two set-up commands of the README, and their parts.
#   make demo   installs what is missing, builds Release, cooks the example graph
#   make test   installs what is missing, builds, runs every test
BUILD_DIR ?= build
JOBS      ?= $(shell nproc)
DEMO_OUT  ?= out/demo
CMAKE_FLAGS ?=

.PHONY: all setup configure build test demo bench clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS); \
	fi

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

demo: build
	@$(BUILD_DIR)/bin/eddy run examples/dam_break_pbf.eddy.json --out $(DEMO_OUT)
	@echo "demo: output written under $(abspath $(DEMO_OUT))"

bench: build
	@$(BUILD_DIR)/bin/eddy_bench_pbf

clean:
	rm -rf $(BUILD_DIR)
