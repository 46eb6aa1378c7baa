# prism: two commands do everything on a fresh Debian 12 machine (as root):
#   make demo   install what is missing, build, run the demo
#   make test   install what is missing, build, run the whole test suite
# Other targets: make build, make asan (the test suite under ASan+UBSan), make bench,
# make perf-baseline / make perf-gate (the timing gate on this machine), make clean.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

# Debian packages the build and the demo need (the CUDA toolkit is optional, never installed).
PACKAGES := cmake make g++ libeigen3-dev doctest-dev libbenchmark-dev libcli11-dev \
            nlohmann-json3-dev libfmt-dev zlib1g-dev dataset-fashion-mnist

# The timing gate (never in CI: machines are shared): `make perf-baseline` records each model's
# bench on this machine, `make perf-gate` measures again and gates against it.
PERF_DIR    ?= $(BUILD)/perf
PERF_MODELS ?= mlp cnn transformer
PERF_BENCH  ?= --batch 1,32 --threads 1 --duration 3

.PHONY: all deps configure build demo test asan bench perf-baseline perf-gate clean

all: build

# Installs only the packages that are missing; does nothing (and needs no root) otherwise.
deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "prism: installing missing packages:$$missing"; \
	  if [ "$$(id -u)" != "0" ]; then \
	    echo "prism: run as root, or install them first: apt-get install$$missing" >&2; exit 1; \
	  fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) > $(BUILD).configure.log 2>&1 \
	  || { cat $(BUILD).configure.log; exit 1; }
	@grep -E "^-- prism:" $(BUILD).configure.log || true

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/prism demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(JOBS)

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer (CPU only, no benches).
# Optimised with debug info: the sanitizers work the same, and the training tests (Eigen GEMMs)
# run in seconds instead of the minutes an -O0 build takes.
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_SANITIZE=ON -DPRISM_BUILD_BENCH=OFF \
	  -DPRISM_CUDA=OFF $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure --no-tests=error -j $(JOBS)

bench: build
	./$(BUILD)/prism_bench_profiler
	./$(BUILD)/prism_bench_kernels

perf-baseline: build
	@mkdir -p $(PERF_DIR)
	@for m in $(PERF_MODELS); do \
	  ./$(BUILD)/prism bench $$m $(PERF_BENCH) --json $(PERF_DIR)/baseline-$$m.json || exit 1; \
	done

perf-gate: build
	@for m in $(PERF_MODELS); do \
	  test -f $(PERF_DIR)/baseline-$$m.json || \
	    { echo "prism: no baseline for $$m on this machine: run make perf-baseline first" >&2; exit 2; }; \
	done
	@status=0; for m in $(PERF_MODELS); do \
	  ./$(BUILD)/prism bench $$m $(PERF_BENCH) --json $(PERF_DIR)/candidate-$$m.json > /dev/null || exit 1; \
	  echo "== $$m"; \
	  ./$(BUILD)/prism gate $(PERF_DIR)/baseline-$$m.json $(PERF_DIR)/candidate-$$m.json --exact flops,allocs || status=1; \
	done; exit $$status

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BUILD).configure.log
