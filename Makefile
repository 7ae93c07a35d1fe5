# Thin wrapper over CMake: `make run` (the default job) and `make test` do all set-up themselves.
BUILD ?= build
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all setup build run test install asan fuzz bench gpu-check clean

all: build

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: a synthetic market, a TFT trained on it, its backtest on the test split, the report.
run: build
	scripts/main-job.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The library, its headers, tickgrad.pc, the CMake package and the command into PREFIX (docs/EMBEDDING.md):
# builds only what is installed, not the tests.
install: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS) --target tickgrad tickgrad_shared tickgrad_cli
	cmake --install $(BUILD) --prefix $(PREFIX)

# The whole test suite once more under AddressSanitizer + UndefinedBehaviorSanitizer (a failed
# allocation returns NULL, as it does without ASan, so out-of-memory paths are tested too).
asan:
	@ASAN_OPTIONS=allocator_may_return_null=1 $(MAKE) --no-print-directory test BUILD=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="$(CMAKE_FLAGS) -DTG_SANITIZE=ON"

# Every reader's libFuzzer target for FUZZ_SECONDS (default 30) under ASan+UBSan.
fuzz: setup
	scripts/fuzz.sh

bench: build
	bench/run.sh $(BUILD)

# One check on a machine with an NVIDIA GPU (build-gpu, devices, CUDA tests, demo, GPU benchmark),
# within about 8 minutes; logs and summary.txt in $OUT (default gpu-check-out). Installs nothing.
gpu-check:
	bash tools/gpu-check.sh

clean:
	rm -rf build build-asan build-fuzz build-gpu gpu-check-out build*.configure.log
