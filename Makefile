# Thin wrapper over CMake presets. `make demo` and `make test` work on a fresh Debian 12 machine.
PRESET ?= ci
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

.PHONY: deps configure build demo test studio clean

deps:
	@bash packaging/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset $(PRESET)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash packaging/demo.sh $(BUILD)

test: build
	ctest --preset $(PRESET) -j $(JOBS)

studio: build
	$(BUILD)/bin/gemflow-studio workflows/nmr_structure.yaml

clean:
	rm -rf build out
