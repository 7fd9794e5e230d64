# Thin wrapper over CMake.  `make run` builds and runs the example job on 4
# processes; `make test` builds and runs the test suite.
BUILD    ?= build
PREFIX   ?= /usr/local
NP       ?= 4
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build run test test-all asan tsan install clean bench fuzz docs

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job: heat diffusion on a shared grid, checked against a sequential run.
run: build
	$(BUILD)/tools/sdsmrun/sdsmrun -n $(NP) --stats $(BUILD)/examples/stencil 1024 512 200

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	cmake -S . -B $(BUILD)-asan -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Debug -DSDSM_SANITIZE=address,undefined
	cmake --build $(BUILD)-asan -j $(JOBS)
	ctest --test-dir $(BUILD)-asan --output-on-failure -j $(JOBS)

# Long fuzzing sessions (docs/developers.md, "Fuzzing"): FUZZ_SECONDS per target,
# FUZZ_ARGS passed to libFuzzer.
FUZZ_SECONDS ?= 600
FUZZ_ARGS ?=
fuzz: build
	@test -x $(BUILD)/tests/fuzz/fuzz_msg || { echo "make fuzz: no libFuzzer targets in $(BUILD): install clang and rerun cmake"; exit 1; }
	for t in msg auth; do \
	  tests/fuzz/run_fuzz.sh $(BUILD)/tests/fuzz/fuzz_$$t $(BUILD)/fuzz/$$t tests/fuzz/corpus/$$t $(FUZZ_SECONDS) $(FUZZ_ARGS) || exit 1; \
	done

# Same suite under ThreadSanitizer.  A thread waiting for a page inside the
# fault handler handles messages meanwhile, and handlers allocate: safe,
# because the fault is synchronous (raised by the program's own access to
# shared memory, never from inside the allocator), but TSan cannot know it.
tsan:
	cmake -S . -B $(BUILD)-tsan -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Debug -DSDSM_SANITIZE=thread
	cmake --build $(BUILD)-tsan -j $(JOBS)
	TSAN_OPTIONS="report_signal_unsafe=0 $(TSAN_OPTIONS)" ctest --test-dir $(BUILD)-tsan --output-on-failure -j $(JOBS)

# docs/reference/variables.md from the configuration table (src/core/config.c).
docs: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) --target docs

bench: build
	bench/micro --build $(BUILD)

# PREFIX is given at install time, not only at the first configure: a build
# directory configured earlier with another prefix must not win silently.
# Builds what it installs (the install-parts target), not the tests and
# applications.
install: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target install-parts
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
