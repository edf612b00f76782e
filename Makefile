# Thin wrapper over CMake presets. `make demo` and `make test` work on a fresh Debian 12 machine.
PRESET ?= ci
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

.PHONY: deps configure build runtime demo test test-asan test-asan-ci studio fuzz lint format clean package

deps:
	@bash packaging/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset $(PRESET)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo needs only the command and the plugins, not the tests, benchmarks or Studio.
runtime: configure
	cmake --build $(BUILD) -j $(JOBS) --target runtime

demo: runtime
	@bash packaging/demo.sh $(BUILD)

test: build
	ctest --preset $(PRESET) -j $(JOBS)

# build/<preset>/packages/gemflow_<version>_<arch>.deb and a .tar.gz (cmake/GemflowPackage.cmake)
package: build
	cmake --build $(BUILD) --target package

# Studio needs a display; it opens the NMR example (or its Welcome page when the file is absent).
studio: build
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ]; then \
	  echo "make studio: no display (DISPLAY is unset). Run it on a desktop, or: xvfb-run -a $(BUILD)/bin/gemflow-studio"; \
	  exit 1; fi
	@test -x $(BUILD)/bin/gemflow-studio || { echo "make studio: gemflow-studio was not built (Qt 6 or VTK missing? see the cmake output)"; exit 1; }
	$(BUILD)/bin/gemflow-studio $(wildcard workflows/nmr_structure.yaml)

# The unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer (the asan
# preset: no CUDA, no Studio), in build/asan; see docs/reliability.md.
test-asan: deps
	@[ -f build/asan/build.ninja ] || cmake --preset asan
	cmake --build build/asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

# The part of test-asan that CI runs (.ci/run): core and workflow loader, io readers and the replay
# of their fuzz inputs, the other plugins' CPU tests, the command's end-to-end tests, the Python
# module, the shipped workflows and sweeps (tests/asan_subset.sh, ASAN_PARTS selects; timings in docs/reliability.md).
test-asan-ci: deps
	@JOBS=$(JOBS) bash tests/asan_subset.sh

# libFuzzer harnesses of every reader and the workflow loader (clang, ASan + UBSan), each run for
# FUZZ_SECONDS (default 60); see docs/reliability.md. Not part of `make test`, which replays the
# committed regression inputs and seed corpus in the normal build.
fuzz:
	@bash tests/fuzz/run_fuzz.sh

# clang-format and clang-tidy (.clang-format, .clang-tidy) over the C++ files changed since
# LINT_BASE (default: the merge base with origin/main); `make format` rewrites them.
lint: configure
	@bash tests/lint.sh lint

format:
	@bash tests/lint.sh format

clean:
	rm -rf build out
