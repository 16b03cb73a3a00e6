# mbs — build, test, bench, install.  `make` builds libmbs.a and ./sim.
#   make test          every test (and the README's examples), ending with "N passed, N failed"
#   make test ONLY=expo   one test file alone (tests/test_expo.c; or a tests/test_NAME.py)
#   make test SAN=1    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make memcheck      the same under valgrind memcheck (a portable build in build-memcheck/)
#   make bench         every benchmark (key: value lines; the tables of docs/benchmarks.md, tools/bench/bench_doc.py)
#   make bench-envs    environment steps per second of 1024 Solo environments on 1 and 2 threads, and MuJoCo's
#   make fuzz          libFuzzer on the URDF, MJCF and scenario parsers (clang; FUZZ_SECONDS each, default 60)
#   make install PREFIX=/usr/local   headers, libmbs.a, mbs.pc, bin/sim, its man page, the Python package (make uninstall)
#   make examples      examples/*.c against the installed library, with pkg-config (EXAMPLES_PREFIX)
#   make man           man/sim.1 regenerated from ./sim --help (help2man)
#   make deps          installs the Debian packages the build and tests need

ifeq ($(origin CC),default)
  CC := gcc
endif
PREFIX  ?= /usr/local
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
XML_LIBS   := $(shell pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)
WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wno-unused-function
ifeq ($(MEMCHECK),1)
  # valgrind decodes no AVX-512: a portable -O1 build of its own, every test run under memcheck
  BUILD := build-memcheck
  OPT   := -O1 -g
  LDSAN :=
  SIM   := $(BUILD)/sim
  export TEST_RUNNER := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
else ifeq ($(SAN),1)
  BUILD := build-san
  OPT   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
  LDSAN := -fsanitize=address,undefined
  SIM   := $(BUILD)/sim
else
  SIM   := sim
  BUILD := build
  # The default build is the fast one: users get it with a bare `make`. -ffp-contract=fast fuses
  # a·b + c into one multiply-add where the CPU has one (clang's default does within an expression,
  # g++'s, hence Pinocchio's build, everywhere; gcc's -std=c11 never): one rounding instead of two.
  OPT   ?= -O3 -march=native -fno-math-errno -fno-trapping-math -ffp-contract=fast -g
  LDSAN :=
endif
CPPFLAGS := -Iinclude -D_POSIX_C_SOURCE=200809L $(XML_CFLAGS)
# -fPIC: the same objects make libmbs.a and libmbs.so (for Python's ctypes); with
# -fno-semantic-interposition the library's calls to itself stay direct, as in a PIE executable;
# -fvisibility=hidden: libmbs.so exports only what include/mbs/*.h declares (they push default
# visibility), never the layers' internal mbsi_ functions (check-layers reads the .so)
CFLAGS_ALL := $(WARN) $(OPT) -fPIC -fno-semantic-interposition -fvisibility=hidden $(CFLAGS)
LIBS    := $(XML_LIBS) -linih -llapacke -lopenblas -lm -pthread
TESTLIBS := -lcjson

LIB_SRC := $(sort $(wildcard src/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB     := $(BUILD)/libmbs.a
# the shared library (soname libmbs.so.MAJOR), for the Python package (python/mbs) and dynamic linking
SO_MAJOR := $(shell sed -n 's/^\#define MBS_VERSION_MAJOR \([0-9]*\).*/\1/p' include/mbs/version.h)
VERSION := $(shell sed -n 's/^\#define MBS_VERSION "\([^"]*\)".*/\1/p' include/mbs/version.h)
SHLIB := $(BUILD)/libmbs.so.$(VERSION)
# objects are rebuilt when the compiler flags change (a stamp holding them)
FLAGS_STAMP := $(BUILD)/.cflags
$(shell mkdir -p $(BUILD) && { echo '$(CC) $(CPPFLAGS) $(CFLAGS_ALL)' | cmp -s - $(FLAGS_STAMP) || echo '$(CC) $(CPPFLAGS) $(CFLAGS_ALL)' > $(FLAGS_STAMP); })
# sim-mpi (below) where Open MPI's mpicc exists
MPICC   ?= mpicc
SIM_MPI := $(patsubst ./%,%,$(dir $(SIM))sim-mpi)
HAVE_MPI := $(shell command -v $(MPICC) 2>/dev/null)
# the replay page (./sim --html): src/sim/replay.html with third_party/'s scripts inlined, as C strings
REPLAY_C := $(BUILD)/gen/replay_page.c
LIB_OBJ += $(BUILD)/gen/replay_page.o
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_COMMON := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard tools/bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:tools/bench/%.c=$(BUILD)/tools/%)
HEADERS := $(wildcard include/*.h include/mbs/*.h src/*.h src/*/*.h tests/*.h tools/*.h tools/bench/*.h tools/bench/*/*.h)

.PHONY: all test bench bench-dynamics install deps clean
all: $(LIB) $(SIM) $(SHLIB)

$(BUILD)/%.o: %.c $(HEADERS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(REPLAY_C): src/sim/replay.html tools/gen/embed_replay.py $(wildcard third_party/*/*.js third_party/*/*.css)
	@mkdir -p $(dir $@)
	python3 tools/gen/embed_replay.py $@

$(BUILD)/gen/replay_page.o: $(REPLAY_C) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libmbs.so.$(SO_MAJOR) -Wl,--no-undefined $(LDSAN) $^ $(LIBS) -o $@
	ln -sf libmbs.so.$(VERSION) $(BUILD)/libmbs.so.$(SO_MAJOR)
	ln -sf libmbs.so.$(SO_MAJOR) $(BUILD)/libmbs.so

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SIM): $(BUILD)/tools/sim.o $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $< $(LIB) $(LIBS) -pthread -o $@

# the allocation test routes the library's allocator calls through counters
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc
$(BUILD)/tests/test_noalloc $(BUILD)/tests/test_ess $(BUILD)/tests/test_expo_noalloc $(BUILD)/tests/test_qp $(BUILD)/tests/test_derivatives $(BUILD)/tests/test_ilqr \
  $(BUILD)/tests/test_batch: TEST_LDFLAGS := $(WRAP_ALLOC)
$(BUILD)/tests/%: tests/%.c $(TEST_COMMON) $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) $(TEST_LDFLAGS) -DMBS_SOURCE_DIR='"$(CURDIR)"' $< $(TEST_COMMON) $(LIB) $(TESTLIBS) $(LIBS) -o $@

# the MJCF loader against MuJoCo (Debian's libmujoco-dev, a test-only dependency never linked into
# libmbs): without its header the test is built without MuJoCo and prints that it skipped
MUJOCO_HDR := $(if $(wildcard /usr/include/mujoco/mujoco.h),1,)
$(BUILD)/tests/test_mjcf_mujoco: tests/test_mjcf_mujoco.c $(TEST_COMMON) $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $(if $(MUJOCO_HDR),-DMBS_HAVE_MUJOCO) $< \
	  $(TEST_COMMON) $(LIB) $(if $(MUJOCO_HDR),-lmujoco) $(TESTLIBS) $(LIBS) -o $@

# the passive walker's limit-cycle tool (docs/passive_walker.md): built with the tests so that it cannot rot
$(BUILD)/tools/walker_cycle: tools/bench/walker_cycle.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) $< $(LIB) $(LIBS) -o $@

$(BUILD)/tools/bench_%: tools/bench/bench_%.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $< $(LIB) $(LIBS) -o $@

# check-layers: no file of src/ includes a header of a layer above its own, every public
# prototype is documented, the library exports only mbs_ (public) and mbsi_ (internal)
# names, and libmbs.so only the public ones (tools/check_layers.py)
.PHONY: check-layers
check-layers: $(LIB) $(SHLIB)
	@python3 tools/check_layers.py --self-test
	@python3 tools/check_layers.py
	@python3 tools/check_layers.py --symbols $(LIB)
	@python3 tools/check_layers.py --dynamic-symbols $(SHLIB)

# example: every program of examples/ (the README's code blocks, verbatim: tests/test_readme.c)
# built against the tree's library into $(BUILD)/tests/examples/ and run from the repository with
# no arguments by `make test` (under valgrind with MEMCHECK=1), so that the README's code cannot rot
.PHONY: example examples
EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/tests/examples/%)
$(BUILD)/tests/examples/%: examples/%.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) $< $(LIB) $(LIBS) -o $@

example: $(EXAMPLE_BIN)
	@for e in $(EXAMPLE_BIN); do echo "$$e"; OPENBLAS_NUM_THREADS=1 $(TEST_RUNNER) $$e || exit 1; done

# examples: the same programs built as a user builds them, against an installed library (headers,
# libmbs.a, mbs.pc under EXAMPLES_PREFIX: `make install PREFIX=...` first) with pkg-config only,
# into $(BUILD)/examples/. CI installs to a temporary prefix, then builds and runs them.
EXAMPLES_PREFIX ?= $(PREFIX)
examples:
	@mkdir -p $(BUILD)/examples
	@flags=$$(test -f $(EXAMPLES_PREFIX)/lib/pkgconfig/mbs.pc && \
	  PKG_CONFIG_PATH=$(EXAMPLES_PREFIX)/lib/pkgconfig pkg-config --cflags --libs --static mbs) || \
	  { echo "make examples: no mbs.pc in $(EXAMPLES_PREFIX)/lib/pkgconfig (make install PREFIX=$(EXAMPLES_PREFIX))" >&2; exit 1; }; \
	for f in $(EXAMPLE_SRC); do \
	  echo "$(CC) $(WARN) $(OPT) $(CFLAGS) $$f $(LDSAN) $$flags -o $(BUILD)/examples/$$(basename $$f .c)"; \
	  $(CC) $(WARN) $(OPT) $(CFLAGS) $$f $(LDSAN) $$flags -o $(BUILD)/examples/$$(basename $$f .c) || exit 1; \
	done

.PHONY: memcheck
memcheck:
	$(MAKE) test MEMCHECK=1

# the Python test loads a sanitized libmbs.so only with the sanitizers' runtimes preloaded
PY_PRELOAD := $(if $(LDSAN),$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so))
# ONLY=NAME runs one test file alone (tests/test_NAME.c or tests/test_NAME.py), e.g. make test ONLY=expo
PY_TESTS := tests/test_replay.py tests/test_sweep.py tests/test_readme_commands.py tests/test_install.py tests/test_cli.py tests/test_events.py tests/test_python.py \
  tests/test_envs.py
ifneq ($(ONLY),)
  ONLY_RUN := $(filter %/test_$(ONLY),$(TEST_BIN)) $(filter tests/test_$(ONLY).py,$(PY_TESTS))
  ifeq ($(strip $(ONLY_RUN)),)
    $(error ONLY=$(ONLY): no tests/test_$(ONLY).c or tests/test_$(ONLY).py (the names: $(patsubst tests/test_%.c,%,$(TEST_SRC)) $(patsubst tests/test_%.py,%,$(PY_TESTS))))
  endif
test: $(filter-out %.py,$(ONLY_RUN)) $(SIM) $(SHLIB) $(if $(HAVE_MPI),$(SIM_MPI))
	@MBS_SIM=$(SIM) MBS_LIBRARY=$(abspath $(BUILD))/libmbs.so MBS_PRELOAD="$(PY_PRELOAD)" sh tests/run_all.sh $(ONLY_RUN)
else
test: $(TEST_BIN) $(SIM) $(SHLIB) $(if $(HAVE_MPI),$(SIM_MPI)) check-layers example $(BUILD)/tools/walker_cycle $(BUILD)/tools/walker_energy
	@MBS_SIM=$(SIM) MBS_LIBRARY=$(abspath $(BUILD))/libmbs.so MBS_PRELOAD="$(PY_PRELOAD)" \
	  sh tests/run_all.sh $(TEST_BIN) $(PY_TESTS)
endif

# sim-mpi: ./sim's sweeps over the ranks of an MPI job (tools/sim_mpi.c); built where Open MPI's
# mpicc exists (apt-get install libopenmpi-dev openmpi-bin), never a dependency of libmbs
ifneq ($(SIM_MPI),sim-mpi)
.PHONY: sim-mpi
sim-mpi: $(SIM_MPI)
endif
$(SIM_MPI): tools/sim_mpi.c $(LIB) $(HEADERS)
	@command -v $(MPICC) >/dev/null || { echo "sim-mpi: no $(MPICC): apt-get install libopenmpi-dev openmpi-bin"; exit 1; }
	OMPI_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) $< $(LIB) $(LIBS) -o $@

# the README's screenshot of the replay page (docs/images/replay_trot.png), taken by the replay test
.PHONY: replay-screenshot
replay-screenshot: $(SIM)
	MBS_SIM=$(SIM) MBS_REPLAY_SHOT=docs/images/replay_trot.png /usr/bin/python3 tests/test_replay.py

# bench rewrites every table and figure of docs/benchmarks.md, so it needs what draws the figures
# (gnuplot) and the peer whose columns the ESS and batch tables hold (MuJoCo): without them it
# stops before running anything, where a bench-NAME target alone runs and says what it skipped.
bench:
	@missing=""; command -v gnuplot >/dev/null 2>&1 || missing=" gnuplot-nox"; \
	[ -n "$(ESS_MUJOCO)" ] || missing="$$missing libmujoco-dev"; \
	if [ -n "$$missing" ]; then echo "make bench rewrites every table and figure of docs/benchmarks.md: it needs" \
	  "gnuplot (the figures) and MuJoCo (the ESS and batch tables' peer); apt-get install -y$$missing," \
	  "or run one bench-NAME target alone" >&2; exit 1; fi
	$(MAKE) bench-dynamics bench-ess bench-variational bench-expo bench-nmdp bench-adaptive bench-walker bench-batch bench-derivatives \
	  bench-mpc bench-envs

# bench_doc: runs a benchmark ($(1)) with its data in $(2), its output teed into $(2)/output.txt, then
# puts the tables its full run wrote ($(2)/tables.md) into docs/benchmarks.md (tools/bench/bench_doc.py)
bench_doc = mkdir -p $(2) && { OPENBLAS_NUM_THREADS=1 $(1) --data $(2); echo $$? > $(2)/status; } | tee $(2)/output.txt; \
  test "$$(cat $(2)/status)" = 0 && python3 tools/bench/bench_doc.py $(2)

bench-dynamics: $(BUILD)/tools/bench_dynamics
	$(call bench_doc,$(BUILD)/tools/bench_dynamics,$(BUILD)/bench_dynamics)

# bench-ess: the event-selected integrator against MuJoCo (issue 4). MuJoCo (Debian's
# libmujoco-dev) is used by this benchmark only, never by libmbs or the tests; without it
# the MuJoCo figures print as n/a.
.PHONY: bench-ess
ESS_MUJOCO := $(if $(wildcard /usr/include/mujoco/mujoco.h),1,)
$(BUILD)/tools/bench_ess: tools/bench/bench_ess.c tests/ess_systems.c tools/bench/ess_mujoco.c tools/bench/ess_mujoco.h $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $(if $(ESS_MUJOCO),-DMBS_HAVE_MUJOCO) \
	  tools/bench/bench_ess.c tests/ess_systems.c $(if $(ESS_MUJOCO),tools/bench/ess_mujoco.c) $(LIB) $(if $(ESS_MUJOCO),-lmujoco) $(LIBS) -o $@

bench-ess: $(BUILD)/tools/bench_ess
	$(call bench_doc,$(BUILD)/tools/bench_ess,$(BUILD)/bench_ess)

# bench-variational: figs. 2-4 of Lee et al. 2016 (issue 5), plots into docs/images when gnuplot
# is installed (optional, not in deps); OpenBLAS on one thread so that Newton's LU is timed alone.
.PHONY: bench-variational
bench-variational: $(BUILD)/tools/bench_variational
	$(call bench_doc,$(BUILD)/tools/bench_variational,$(BUILD)/bench_variational)

# the SVI baseline (Johnson & Murphey 2009; tools/bench/svi.c, a benchmark tool, never in libmbs), linked into
# bench_variational and into its test, which counts allocations (tests/alloc_count.h)
$(BUILD)/tools/bench_variational: tools/bench/bench_variational.c tools/bench/svi.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $< tools/bench/svi.c $(LIB) $(LIBS) -o $@
$(BUILD)/tests/test_svi: tests/test_svi.c tools/bench/svi.c $(TEST_COMMON) $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) $(WRAP_ALLOC) -DMBS_SOURCE_DIR='"$(CURDIR)"' $< tools/bench/svi.c $(TEST_COMMON) \
	  $(LIB) $(TESTLIBS) $(LIBS) -o $@

# bench-expo: section 6 of Hammoud et al. 2022 (issue 3) on the Solo scenarios and Romeo's walk: local error vs
# real-time factor, largest stable step, time per step, error vs contact stiffness and damping, touch-downs
# per scheme, cost against active contacts; plots into docs/images when gnuplot is installed (optional,
# not in deps), tables into docs/benchmarks.md. About 7 to 9 minutes on 2 shared cores.
.PHONY: bench-expo
bench-expo: $(BUILD)/tools/bench_expo
	$(call bench_doc,$(BUILD)/tools/bench_expo,$(BUILD)/bench_expo)

# bench_expo is its command line (tools/bench/bench_expo.c) and one file per part (tools/bench/expo/),
# compiled apart so that a change to one part rebuilds that part alone
EXPO_SRC := tools/bench/bench_expo.c $(sort $(wildcard tools/bench/expo/*.c))
EXPO_OBJ := $(EXPO_SRC:%.c=$(BUILD)/%.o)
$(EXPO_OBJ): CPPFLAGS += -DMBS_SOURCE_DIR='"$(CURDIR)"'
$(BUILD)/tools/bench_expo: $(EXPO_OBJ) $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(EXPO_OBJ) $(LIB) $(LIBS) -o $@

# bench-nmdp: section VI of Pan and Hauser 2020 (issue 12) on the Robosimian jump and walk: torso tilt,
# height and distance for steps of 5 to 50 ms with mdp (both feedbacks: semi-implicit, and explicit as the
# paper's NE-MDP, also from 0.1 ms, issue 42), nmdp, expo and implicit_euler, the spread
# across step sizes (table I), first- against zeroth-order nmdp (fig. 6, and zeroth order over the step sizes), position-based nmdp (PBD-NMDP, PBD-ZONMDP, eq. 12); plots into docs/images
# when gnuplot is installed (optional, not in deps).
.PHONY: bench-nmdp
bench-nmdp: $(BUILD)/tools/bench_nmdp
	$(call bench_doc,$(BUILD)/tools/bench_nmdp,$(BUILD)/bench_nmdp)

# bench-adaptive: section IV of Zapolsky and Drumwright 2015 (issue 13): steps before failure against
# the step (fig. 3), the walker's largest energy-keeping step with Euler and RK4, explicit against
# semi-implicit Euler's kinetic-energy error, the error-controlled trot (fig. 4), dissipation (fig. 5).
.PHONY: bench-adaptive
bench-adaptive: $(BUILD)/tools/bench_adaptive
	$(call bench_doc,$(BUILD)/tools/bench_adaptive,$(BUILD)/bench_adaptive)

# bench-walker: experiment b of Zapolsky and Drumwright 2015 on the paper's own system (issue 42): the 3D
# passive walker's swing from its stable limit cycle (scenarios/passive_walker_cycle.ini), the largest
# energy-keeping step of explicit Euler and RK4, and of the rigid stepper. Under a minute.
.PHONY: bench-walker
$(BUILD)/tools/walker_energy: tools/bench/walker_energy.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $< $(LIB) $(LIBS) -o $@

bench-walker: $(BUILD)/tools/walker_energy
	$(call bench_doc,$(BUILD)/tools/walker_energy,$(BUILD)/bench_walker)

# bench-batch: batch rollouts (issue 15): system steps per second of N = 1 ... 4096 Solo systems
# (expo, 2 ms) on 1 and 2 threads, and MuJoCo's mj_step on the same robot beside them when
# libmujoco-dev is installed (tools/bench/batch_mujoco.c; never linked into libmbs).
.PHONY: bench-batch
# a benchmark with a MuJoCo side: $(1) the benchmark, $(2) its MuJoCo files (compiled in with libmujoco-dev only)
with_mujoco = $(CC) $(CPPFLAGS) $(CFLAGS_ALL) $(LDSAN) -DMBS_SOURCE_DIR='"$(CURDIR)"' $(if $(ESS_MUJOCO),-DMBS_HAVE_MUJOCO) \
	  $(1) $(if $(ESS_MUJOCO),$(2)) $(LIB) $(if $(ESS_MUJOCO),-lmujoco) $(LIBS) -o $@
$(BUILD)/tools/bench_batch: tools/bench/bench_batch.c tools/bench/batch_mujoco.c tools/bench/solo_mujoco.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(call with_mujoco,tools/bench/bench_batch.c,tools/bench/batch_mujoco.c tools/bench/solo_mujoco.c)

bench-batch: $(BUILD)/tools/bench_batch
	$(call bench_doc,$(BUILD)/tools/bench_batch,$(BUILD)/bench_batch)

# bench-envs: environment steps per second (one step = one 10 ms control period) of 1024 solo-walk
# environments (python/mbs/envs.py) on 1 and 2 threads, and MuJoCo's mj_step on the same robot under the
# same PD, period and threads (tools/bench/envs_mujoco.c, with libmujoco-dev; never linked into libmbs),
# in the same run (tools/bench/bench_envs.py). About a minute.
.PHONY: bench-envs
$(BUILD)/tools/envs_mujoco: tools/bench/envs_mujoco.c tools/bench/batch_mujoco.c tools/bench/solo_mujoco.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(call with_mujoco,tools/bench/envs_mujoco.c,tools/bench/batch_mujoco.c tools/bench/solo_mujoco.c)

bench-envs: $(SHLIB) $(if $(ESS_MUJOCO),$(BUILD)/tools/envs_mujoco)
	$(call bench_doc,MBS_LIBRARY=$(abspath $(SHLIB)) /usr/bin/python3 tools/bench/bench_envs.py \
	  $(if $(ESS_MUJOCO),--mujoco $(BUILD)/tools/envs_mujoco),$(BUILD)/bench_envs)

# bench-derivatives: the cost of one step's Jacobians (mbs_stepper_derivatives) on Solo standing, Solo
# mid-trot and Romeo standing, per scheme with analytical derivatives and for expo (forward
# differences), their error against central differences, MuJoCo's mjd_transitionFD on the same Solo
# when libmujoco-dev is installed (tools/bench/derivatives_mujoco.c; never linked into libmbs), and
# the cost against 1 to 16 contacts. Under a minute.
.PHONY: bench-derivatives
$(BUILD)/tools/bench_derivatives: tools/bench/bench_derivatives.c tools/bench/derivatives_mujoco.c tools/bench/solo_mujoco.c \
  $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(call with_mujoco,tools/bench/bench_derivatives.c,tools/bench/derivatives_mujoco.c tools/bench/solo_mujoco.c)

bench-derivatives: $(BUILD)/tools/bench_derivatives
	$(call bench_doc,$(BUILD)/tools/bench_derivatives,$(BUILD)/bench_derivatives)

# bench-mpc: the mpc controller on scenarios/solo_mpc_stand.ini (issue 39): iLQR iterations per second with
# the analytical step Jacobians against forward differences, and the closed loop after a push beside the
# joint PD and TSID on the same push; then scenarios/solo_mpc_trot.ini with either kind of derivatives beside
# the joint-PD trot under its push. About half a minute.
.PHONY: bench-mpc
bench-mpc: $(BUILD)/tools/bench_mpc
	$(call bench_doc,$(BUILD)/tools/bench_mpc,$(BUILD)/bench_mpc)

# fuzz: libFuzzer targets for the parsers (tools/fuzz/fuzz_urdf.c, fuzz_mjcf.c, fuzz_scenario.c), built
# with clang under ASan + UBSan (leaks on) into build-fuzz/ and run one after the other (never two
# at once), each for FUZZ_SECONDS, from seeds copied into build-fuzz/corpus_* so that runs never
# write into the repository. Not part of all, test or CI. A finding lands in
# build-fuzz/artifacts/; replay it with build-fuzz/fuzz_urdf FILE (or fuzz_scenario).
.PHONY: fuzz fuzz-build
FUZZ_SECONDS ?= 60
FUZZ_CC  := clang
FUZZ     := build-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := $(WARN) -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ)/%.o) $(FUZZ)/gen/replay_page.o
$(FUZZ)/gen/replay_page.o: $(REPLAY_C)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@
FUZZ_ENV := OPENBLAS_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -timeout=30: a valid scenario may plan a long walk (the walk pattern of a 100-step Romeo walk takes
# seconds under the sanitizers, docs/fuzzing.md); a hang still fails
FUZZ_ARGS = -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
$(FUZZ)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ)/libmbs.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ)/fuzz_%: tools/fuzz/fuzz_%.c $(FUZZ)/libmbs.a $(HEADERS)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -DMBS_SOURCE_DIR='"$(CURDIR)"' $< $(FUZZ)/libmbs.a $(LIBS) -o $@

fuzz-build: $(FUZZ)/fuzz_urdf $(FUZZ)/fuzz_mjcf $(FUZZ)/fuzz_scenario

# The bad scenarios name their model from tests/data/scenarios_bad/; the fuzzer reads every
# input as scenarios/fuzz.ini, so their seeds get the path from scenarios/.
fuzz: fuzz-build
	@mkdir -p $(FUZZ)/corpus_urdf $(FUZZ)/corpus_mjcf $(FUZZ)/corpus_scenario $(FUZZ)/artifacts
	cp urdf/*.urdf tests/models/*.urdf tests/data/urdf_bad/* $(FUZZ)/corpus_urdf/
	cp tests/models/mjcf/*.xml $(FUZZ)/corpus_mjcf/
	for f in scenarios/*.ini tests/data/scenarios_bad/*; do \
	  sed 's|\.\./\.\./\.\./urdf/|../urdf/|' $$f > $(FUZZ)/corpus_scenario/seed_$$(basename $$f); done
	$(FUZZ_ENV) $(FUZZ)/fuzz_urdf $(FUZZ_ARGS) -dict=tools/fuzz/fuzz_urdf.dict \
	  -artifact_prefix=$(FUZZ)/artifacts/urdf- $(FUZZ)/corpus_urdf
	$(FUZZ_ENV) $(FUZZ)/fuzz_mjcf $(FUZZ_ARGS) -dict=tools/fuzz/fuzz_mjcf.dict \
	  -artifact_prefix=$(FUZZ)/artifacts/mjcf- $(FUZZ)/corpus_mjcf
	$(FUZZ_ENV) $(FUZZ)/fuzz_scenario $(FUZZ_ARGS) -dict=tools/fuzz/fuzz_scenario.dict \
	  -artifact_prefix=$(FUZZ)/artifacts/scenario- $(FUZZ)/corpus_scenario

# install: the headers, libmbs.a, mbs.pc (its Version is MBS_VERSION of include/mbs/version.h),
# ./sim as bin/sim and its man page, the Python package. uninstall removes exactly those files, then the directories
# install made when they are left empty.
INSTALLED_HEADERS := $(notdir $(wildcard include/mbs/*.h))
# The Python package goes where /usr/bin/python3 looks under PREFIX, asked of python itself, since
# Debian's python searches lib/python3.X/site-packages under the user's base (~/.local) but
# lib/python3.X/dist-packages under /usr/local: the user site when PREFIX is that base, else the
# first folder of sys.path under PREFIX/lib, else lib/python3.X/site-packages (for PYTHONPATH).
# Recursive (=), so that only install and uninstall start python.
PYDIR = $(or $(shell /usr/bin/python3 tools/gen/python_dir.py '$(PREFIX)'),$(error no /usr/bin/python3 to say where the Python package goes (make deps)))
PY_FILES := $(notdir $(wildcard python/mbs/*.py))
INSTALL_DIRS = include/mbs include lib/pkgconfig $(PYDIR)/mbs $(PYDIR) $(patsubst %/,%,$(dir $(PYDIR))) lib bin share/man/man1 share/man \
  share/mbs/urdf share/mbs/scenarios share/mbs share
# what mbs.envs reads (python/mbs/envs.py): Solo's URDF and the scenario of its contacts, in share/mbs
ENV_DATA_URDF := urdf/solo12.urdf
ENV_DATA_SCENARIOS := scenarios/solo_trot.ini
install: $(LIB) $(SIM) $(SHLIB)
	install -d $(DESTDIR)$(PREFIX)/include/mbs $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs
	install -m 644 include/mbs.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/mbs/*.h $(DESTDIR)$(PREFIX)/include/mbs/
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' mbs.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mbs.pc
	install -m 755 $(SIM) $(DESTDIR)$(PREFIX)/bin/sim
	install -m 644 man/sim.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libmbs.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmbs.so.$(SO_MAJOR)
	ln -sf libmbs.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libmbs.so
	install -m 644 python/mbs/*.py $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/
	echo 'LIBRARY = "$(PREFIX)/lib/libmbs.so.$(SO_MAJOR)"   # written by make install' > $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/_installed.py
	echo 'DATA = "$(PREFIX)/share/mbs"   # mbs.envs: the robot and its scenario' >> $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/_installed.py
	install -d $(DESTDIR)$(PREFIX)/share/mbs/urdf $(DESTDIR)$(PREFIX)/share/mbs/scenarios
	install -m 644 $(ENV_DATA_URDF) $(DESTDIR)$(PREFIX)/share/mbs/urdf/
	install -m 644 $(ENV_DATA_SCENARIOS) $(DESTDIR)$(PREFIX)/share/mbs/scenarios/

.PHONY: uninstall
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/mbs.h $(INSTALLED_HEADERS:%=$(DESTDIR)$(PREFIX)/include/mbs/%) \
	  $(DESTDIR)$(PREFIX)/lib/libmbs.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/mbs.pc \
	  $(DESTDIR)$(PREFIX)/bin/sim $(DESTDIR)$(PREFIX)/share/man/man1/sim.1 \
	  $(DESTDIR)$(PREFIX)/lib/libmbs.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmbs.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libmbs.so \
	  $(PY_FILES:%=$(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/%) $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/_installed.py \
	  $(addprefix $(DESTDIR)$(PREFIX)/share/mbs/urdf/,$(notdir $(ENV_DATA_URDF))) \
	  $(addprefix $(DESTDIR)$(PREFIX)/share/mbs/scenarios/,$(notdir $(ENV_DATA_SCENARIOS)))
	rm -rf $(DESTDIR)$(PREFIX)/$(PYDIR)/mbs/__pycache__
	-@for d in $(INSTALL_DIRS); do rmdir $(DESTDIR)$(PREFIX)/$$d 2>/dev/null; done; true

# man: man/sim.1 regenerated by help2man from `./sim --help` and `./sim --version`, with the
# sections of man/sim.h2m (Debian's help2man; the page is committed, so that install needs
# neither). Run it after changing either. The sed keeps the usage lines (each "sim" then an option,
# or "sim FILE.ini" then an option, as the --sweep line) and the option tables' lines
# (key = default: ...) one per line, as --help prints them.
# man-check (CI) fails when man/sim.1 differs from a fresh one but for its date.
.PHONY: man man-check
MAN_OUT ?= man/sim.1
man: $(SIM)
	help2man --locale=C.UTF-8 --no-info --include=man/sim.h2m --output=$(MAN_OUT) \
	  --name="run the rigid-body simulation scenarios of the mbs engine" $(if $(findstring /,$(SIM)),$(SIM),./$(SIM))
	sed -i -e 's/^\([a-z_0-9]* = \)/.br\n\1/' -e 's/^\(sim \(FILE\.ini \)\?\\fB\)/.br\n\1/' $(MAN_OUT)

man-check: $(SIM)
	@$(MAKE) --no-print-directory man MAN_OUT=$(BUILD)/sim.1 >/dev/null
	@sed '/^\.TH /d' man/sim.1 > $(BUILD)/sim.1.committed; sed '/^\.TH /d' $(BUILD)/sim.1 > $(BUILD)/sim.1.fresh
	@diff -u $(BUILD)/sim.1.committed $(BUILD)/sim.1.fresh || \
	  { echo "man/sim.1 is not what ./sim --help says now: run make man" >&2; exit 1; }
	@echo "man-check: man/sim.1 is up to date"

DEBS := build-essential pkg-config python3 python3-numpy libopenblas-dev liblapacke-dev libxml2-dev libinih-dev libcjson-dev chromium
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; else echo "deps: all present"; fi

clean:
	rm -rf build build-san build-memcheck build-fuzz sim
