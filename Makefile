# tilesmith build.  `make` builds ./tilesmith; `make test` runs everything.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
# OpenMP splits the trainer's elementwise work over the cores (gcc's libgomp;
# the clang fuzz build leaves the pragmas out: it exercises the front end).
# OpenBLAS is Debian's OpenMP build (libopenblas0-openmp), so sgemm's threads
# and ours are one pool: with the default pthread build each pool's idle
# threads spin while the other works (the trainer's step ran at half speed).
# Without that package the default build is linked, correct but slower.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BLASDIR  ?= /usr/lib/$(MULTIARCH)/openblas-openmp
BLAS      = $(if $(wildcard $(BLASDIR)/libopenblas.so.0),$(BLASDIR)/libopenblas.so.0 -Wl$(comma)-rpath$(comma)$(BLASDIR),-lopenblas)
comma    := ,
DEFS     = -D_POSIX_C_SOURCE=200809L -fopenmp -fno-math-errno
LDLIBS   = $(BLAS) -lz -lm -fopenmp
FUZZ_SECONDS ?= 60

SRCS     = $(filter-out src/cli/%.c,$(wildcard src/*/*.c))
CLI      = $(wildcard src/cli/*.c)
OBJS     = $(SRCS:%.c=build/rel/%.o) build/rel/prelude.o build/rel/dynamic_py.o build/rel/source_id.o
HDRS     = $(wildcard src/*/*.h src/*/*.def src/*/*.inc)
UNIT     = $(wildcard tests/unit/*.c)

ASAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=undefined -DTS_DEBUG
ASAN_OBJS  = $(SRCS:%.c=build/asan/%.o) build/asan/prelude.o build/asan/dynamic_py.o build/asan/source_id.o

.PHONY: all test requirements unit structures golden crosscheck rules asan asan-test fuzz fuzz-run bench clean update-golden

all: tilesmith

tilesmith: $(CLI:%.c=build/rel/%.o) $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/rel/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEFS) $(CFLAGS) -c -o $@ $<

# The prelude is embedded: lean/Tilesmith.lean becomes a C array.
build/embed: tools/embed.c
	@mkdir -p build
	$(CC) $(WARN) -O1 -o $@ $<
build/prelude.c: lean/Tilesmith.lean build/embed
	build/embed ts_prelude $< > $@
build/rel/prelude.o: build/prelude.c
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<
build/asan/prelude.o: build/prelude.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(ASAN_FLAGS) -c -o $@ $<
# So is the runtime of a module over free sizes (src/emit/dynamic.c).
build/dynamic_py.c: src/emit/dynamic.py.in build/embed
	build/embed ts_dynamic_py $< > $@
build/rel/dynamic_py.o: build/dynamic_py.c
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<
build/asan/dynamic_py.o: build/dynamic_py.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(ASAN_FLAGS) -c -o $@ $<

# The sources' fingerprint: a module over free sizes keys its cache of
# compiled kernels by it, so a rebuilt tilesmith of the same version does
# not reuse kernels an older build emitted.
SOURCE_ID_INPUTS = $(sort $(SRCS) $(CLI) $(HDRS)) lean/Tilesmith.lean src/emit/dynamic.py.in
build/source_id.c: $(SOURCE_ID_INPUTS)
	@mkdir -p build
	@printf 'const char ts_source_id[] = "%s";\n' "$$(cat $(SOURCE_ID_INPUTS) | cksum | cut -d' ' -f1)" > $@
build/rel/source_id.o: build/source_id.c
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<
build/asan/source_id.o: build/source_id.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(ASAN_FLAGS) -c -o $@ $<

build/unit: $(UNIT) $(OBJS) tests/unit/unit.h tests/rules/planted.def
	$(CC) $(WARN) $(DEFS) $(CFLAGS) -o $@ $(UNIT) $(OBJS) $(LDLIBS)

# The structures the search must find (tests/search/structures.c).
build/structures: tests/search/structures.c $(OBJS)
	$(CC) $(WARN) $(DEFS) $(CFLAGS) -o $@ $< $(OBJS) $(LDLIBS)

# The rule checks (tests/rules): every rewrite rule proven with Z3 (the only
# program linked with libz3; tilesmith itself does not depend on it) and
# equality saturation end to end on every example.
build/prove_rules: tests/rules/prove_rules.c tests/rules/planted.def $(OBJS)
	$(CC) $(WARN) $(DEFS) $(CFLAGS) -o $@ tests/rules/prove_rules.c $(OBJS) $(LDLIBS) -lz3
build/rewrite_examples: tests/rules/rewrite_examples.c $(OBJS)
	$(CC) $(WARN) $(DEFS) $(CFLAGS) -o $@ tests/rules/rewrite_examples.c $(OBJS) $(LDLIBS)

# Sanitizer build of the program and the unit tests (also a debug build:
# the graph invariant checker runs between stages).
build/asan/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(DEFS) $(ASAN_FLAGS) -c -o $@ $<
build/asan/tilesmith: $(CLI:%.c=build/asan/%.o) $(ASAN_OBJS)
	$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS)
build/asan/unit: $(UNIT) $(ASAN_OBJS) tests/unit/unit.h tests/rules/planted.def
	$(CC) $(WARN) $(DEFS) $(ASAN_FLAGS) -o $@ $(UNIT) $(ASAN_OBJS) $(LDLIBS)
asan: build/asan/tilesmith build/asan/unit

# libFuzzer target over lexing, parsing and elaboration (clang only).
build/fuzz/fuzz_front: tests/fuzz/fuzz_front.c $(SRCS) build/prelude.c build/dynamic_py.c $(HDRS)
	@mkdir -p build/fuzz
	clang $(WARN) $(filter-out -fopenmp,$(DEFS)) -Wno-unknown-pragmas -Wno-source-uses-openmp \
	  -O1 -g -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -DTS_DEBUG -o $@ tests/fuzz/fuzz_front.c \
	  $(SRCS) build/prelude.c build/dynamic_py.c $(filter-out -fopenmp,$(LDLIBS))
fuzz: build/fuzz/fuzz_front

unit: build/unit
	build/unit

structures: build/structures
	build/structures

golden: tilesmith
	tests/golden.sh ./tilesmith

update-golden: tilesmith
	UPDATE=1 tests/golden.sh ./tilesmith

crosscheck: tilesmith
	python3 tests/crosscheck.py ./tilesmith

rules: build/prove_rules build/rewrite_examples
	tests/rules/run.sh

asan-test: asan
	build/asan/unit
	tests/golden.sh build/asan/tilesmith

fuzz-run: fuzz
	tests/fuzz/run.sh build/fuzz/fuzz_front $(FUZZ_SECONDS)

# python3, requirements-test.txt and clang with libFuzzer are checked before
# anything is built: a missing one stops `make test` at once, saying what to
# install.
requirements:
	@tests/run.sh --requirements

test: requirements
	@$(MAKE) --no-print-directory all build/unit build/structures build/prove_rules build/rewrite_examples asan fuzz
	tests/run.sh $(FUZZ_SECONDS)

bench: tilesmith
	bench/front_bench.sh ./tilesmith

clean:
	rm -rf build tilesmith
