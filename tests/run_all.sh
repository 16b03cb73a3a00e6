#!/bin/sh
# Runs every test binary given; each prints "<name>: N passed, N failed" as its last line.
# Sums them and ends with the total; fails when any test failed or any binary crashed.
# OpenBLAS on one thread, as ./sim and the benchmarks run it (README; the matrices are small): its
# idle threads otherwise spin in sched_yield, which under valgrind, where all threads share one
# core, multiplied the memcheck run's time
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
pass=0; fail=0; crashed=""; said_skip=""
for t in "$@"; do
    # TEST_RUNNER: e.g. valgrind (make memcheck), for the C tests; a Python test runs as it is
    case "$t" in
    *.py) out=$(/usr/bin/python3 "$t" 2>&1); rc=$? ;;
    *) out=$($TEST_RUNNER "$t" 2>&1); rc=$? ;;
    esac
    printf '%s\n' "$out" | grep -E 'FAIL|passed, .* failed' 
    # a test that needs ../shared/reference (third-party descriptions) says it skipped: once per run
    if [ -z "$said_skip" ] && printf '%s\n' "$out" | grep -q '^skipped: ../shared/reference not found$'; then
        echo "skipped: ../shared/reference not found"; said_skip=1
    fi
    line=$(printf '%s\n' "$out" | grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 20
        crashed="$crashed $(basename "$t")"; fail=$((fail + 1)); continue
    fi
    p=$(printf '%s' "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    pass=$((pass + p)); fail=$((fail + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then crashed="$crashed $(basename "$t")"; fail=$((fail + 1)); fi
done
[ -n "$crashed" ] && echo "crashed or exited non-zero:$crashed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
