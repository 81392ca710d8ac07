#!/bin/sh
# bench/gpu-check.sh: the checks of the GPU path that need a GPU, in one
# run of under 8 minutes on a machine with CUDA in /usr/local/cuda and one
# GPU (an H200 here), no network needed when the build deps are there:
#   1. build hunter out of tree with --with-cuda=yes (./bootstrap only if
#      a build dependency is missing; it installs with apt);
#   2. run tests/unit/test-cuda (every CUDA kernel against its CPU twin,
#      the nccl backend) and test-nvml: they must PASS, a SKIP fails here;
#   3. hunter --version, and NVML's view of the GPUs;
#   4. bench/cuda-bench: fmnist-mlp's step on the GPU as samples/s (the
#      kernels: the worker has no GPU train loop yet, said so below),
#      top-k GB/s against cudaMemcpy, NCCL allreduce (world 1) and the
#      compressed exchange path.
# Everything printed also goes to $OUT/gpu-check.txt when OUT is set, with
# the test logs beside it.  A failed test does not stop the run (the
# benchmark still runs, for the numbers); a failed build does.  Exit 0
# when every step passed.
# Usage: bench/gpu-check.sh   (BUILD=dir to build elsewhere than
# /tmp/hunter-gpu-build; JOBS=n for make -j)
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-/tmp/hunter-gpu-build}
JOBS=${JOBS:-$(nproc)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDA_HOME
start=$(date +%s)

if [ -n "${OUT:-}" ] && [ -z "${GPU_CHECK_TEED:-}" ]; then
	mkdir -p "$OUT"
	rm -f "$OUT/.rc"
	GPU_CHECK_TEED=1 sh "$0" "$@" 2>&1 | tee "$OUT/gpu-check.txt"
	exit "$(cat "$OUT/.rc" 2>/dev/null || echo 1)"
fi

bad=""
finish() {
	rc=$1
	[ -n "$bad" ] && rc=1 && echo "gpu-check: failed:$bad"
	echo "== gpu-check: $([ "$rc" = 0 ] && echo PASSED || echo FAILED)" \
	    "in $(( $(date +%s) - start ))s"
	if [ -n "${OUT:-}" ]; then
		for f in tests/unit/test-cuda.log tests/unit/test-nvml.log \
		    test-suite.log config.log; do
			[ -f "$BUILD/$f" ] && cp "$BUILD/$f" "$OUT/" 2>/dev/null
		done
		echo "$rc" > "$OUT/.rc"
	fi
	exit "$rc"
}
fail() { echo "gpu-check: FAIL: $*"; finish 1; }
# A check failed: say so, carry on, fail at the end.
flop() { echo "gpu-check: FAIL: $1"; bad="$bad $2"; }
step() { echo; echo "== $* ($(( $(date +%s) - start ))s)"; }

step "machine"
uname -srm
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
"$CUDA_HOME/bin/nvcc" --version | tail -2 || fail "no nvcc in $CUDA_HOME/bin"
nproc

step "build dependencies"
missing=""
for m in ncursesw yaml-0.1 libssh jansson zlib cmocka; do
	pkg-config --exists "$m" 2>/dev/null || missing="$missing $m"
done
pkg-config --exists openblas 2>/dev/null || pkg-config --exists cblas \
    2>/dev/null || missing="$missing openblas"
[ -f /usr/include/gloo/rendezvous/context.h ] || missing="$missing gloo"
for t in gcc g++ make pkg-config; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
fresh() {	# configure and Makefile.in are there and newer than their sources
	[ -x "$SRC/configure" ] && [ -f "$SRC/Makefile.in" ] &&
	    [ "$SRC/configure" -nt "$SRC/configure.ac" ]
}
if ! fresh && ! command -v autoreconf >/dev/null 2>&1; then
	missing="$missing autoconf automake"
fi
if [ -n "$missing" ]; then
	echo "missing:$missing; running ./bootstrap (apt-get)"
	BUILD="$BUILD" timeout 420 "$SRC/bootstrap" --with-cuda=yes -q ||
	    fail "./bootstrap could not install or build (missing:$missing)"
else
	echo "all present"
	if ! fresh; then
		(cd "$SRC" && autoreconf -fi) || fail "autoreconf"
	elif ! command -v automake >/dev/null 2>&1; then
		# Generated files came with the tree: keep make from
		# regenerating them with tools that are not here.
		(cd "$SRC" && touch aclocal.m4 && sleep 1 && touch configure \
		    config.h.in && sleep 1 && find . -name Makefile.in \
		    -exec touch {} +)
	fi
fi

step "configure --with-cuda=yes and build in $BUILD"
mkdir -p "$BUILD"
(cd "$BUILD" && "$SRC/configure" -q --with-cuda=yes) >"$BUILD/configure.out" 2>&1 ||
    { tail -30 "$BUILD/configure.out"; fail "configure --with-cuda=yes"; }
grep -E "CUDA|will build" "$BUILD/configure.out"
(cd "$BUILD" && make -j"$JOBS" >make.out 2>&1) ||
    { tail -40 "$BUILD/make.out"; fail "make"; }
(cd "$BUILD" && make -j"$JOBS" check TESTS= >make-check.out 2>&1) ||
    { tail -40 "$BUILD/make-check.out"; fail "building the tests"; }
echo "built"

step "hunter --version"
"$BUILD/hunter" --version || fail "hunter --version"

step "CUDA kernels against their CPU twins, nccl backend (must PASS)"
(cd "$BUILD" && timeout 300 ./tests/unit/test-cuda) \
    >"$BUILD/test-cuda.out" 2>&1
rc=$?
cat "$BUILD/test-cuda.out"
cp "$BUILD/test-cuda.out" "$BUILD/tests/unit/test-cuda.log" 2>/dev/null
if [ "$rc" = 77 ]; then
	flop "test-cuda was SKIPPED: no usable CUDA device" test-cuda
elif [ "$rc" = 124 ]; then
	flop "test-cuda timed out after 300s" test-cuda
elif [ "$rc" != 0 ]; then
	flop "test-cuda exited $rc" test-cuda
elif grep -q "SKIPPED" "$BUILD/test-cuda.out"; then
	flop "some CUDA tests were skipped" test-cuda
else
	echo "test-cuda: PASS"
fi
if (cd "$BUILD" && timeout 60 ./tests/unit/test-nvml) \
    >"$BUILD/tests/unit/test-nvml.log" 2>&1; then
	echo "test-nvml: PASS"
else
	cat "$BUILD/tests/unit/test-nvml.log"
	flop "test-nvml" test-nvml
fi

step "NVML on this machine, through backend/agent/nvml.c"
cat > "$BUILD/nvml-show.c" <<'EOF'
#include <stdio.h>
#include <jansson.h>
#include "backend/agent/nvml.h"
#include "backend/agent/cuda-probe.h"
int main(void) {
	struct gpu_sample gs[16];
	int n = nvml_sample(gs, 16);
	char *s;
	json_t *j = gpu_samples_json(gs, n);
	s = json_dumps(j, JSON_INDENT(1));
	printf("%d GPU(s)%s%s\n%s\n", n, n ? "" : ": ",
	    n ? "" : (nvml_absent_reason() ? nvml_absent_reason() : "none"), s);
	printf("driver %s, CUDA runtime %s, NCCL %s\n", cuda_driver_version(),
	    cuda_runtime_version(), cuda_nccl_version());
	return 0;
}
EOF
if (cd "$BUILD" && gcc -std=c11 -include config.h -I. -I"$SRC" \
    $(pkg-config --cflags jansson) -I"$CUDA_HOME/include" nvml-show.c \
    libhunter.a $(pkg-config --libs jansson) \
    -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lnccl -lcudart \
    -lstdc++ -ldl -lm -o nvml-show 2>nvml-show.err); then
	"$BUILD/nvml-show"
else
	echo "(could not build the NVML probe:"; head -5 "$BUILD/nvml-show.err"
	echo ")"
fi

step "fmnist-mlp on one GPU"
echo "not run: the worker has no GPU train loop yet (backend/worker calls"
echo "kernels/cpu only), so there is no 'hunter run' of a cuda job to time."
echo "Below: the same step (784-256-256-10, batch 128, SGD) on the GPU"
echo "kernels, as samples/s."

step "bench/cuda-bench"
(cd "$BUILD" && timeout 240 ./bench/cuda-bench) || flop "bench/cuda-bench" cuda-bench

finish 0
