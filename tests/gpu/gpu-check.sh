#!/bin/sh
# tests/gpu/gpu-check.sh: the checks of the GPU path that need a GPU, in one
# run of under 9 minutes on a machine with one GPU (an H200 here) and CUDA
# in /usr/local/cuda, no network needed:
#   1. the programs: with GPU_PACK=DIR (or a .gpu-pack folder in the
#      source tree), those tests/gpu/gpu-pack.sh built elsewhere, with the
#      libraries packed beside them -- for a GPU machine that has none of
#      hunter's build dependencies; else build hunter out of tree with
#      --with-cuda=yes (./bootstrap only if a build dependency is missing;
#      it installs with apt);
#   2. run tests/unit/test-cuda (every CUDA kernel and the device model,
#      an mlp's and a gpt's, against their CPU twins, the nccl backend),
#      test-cuda-gpt (the transformer's twins) and test-nvml: they must
#      PASS, a SKIP fails here;
#   3. hunter --version, and NVML's view of the GPUs (tests/gpu/nvml-show);
#   4. fmnist-mlp trained by `hunter run` on one GPU (device: cuda, a
#      one-node cluster with one cuda slot), then on one CPU slot: test
#      accuracy and samples/s of each, and their ratio;
#   5. a byte-level gpt (L=2, H=4, C=128, T=64) trained by `hunter run` on
#      200 kB of this tree's documentation and sources, on the GPU, then
#      on a CPU slot: both finish, the first step's loss agrees within
#      1e-4 relative (the same parameters and batch), the final
#      validation loss within 3% (trajectories apart by rounding only),
#      and samples/s of each;
#   6. hunter bench cuda: the mlp step on the GPU kernels alone as
#      samples/s, the gpt S shape's step on the device model, top-k GB/s
#      against cudaMemcpy, NCCL allreduce (world 1) and the compressed
#      exchange path.
# Everything printed also goes to $OUT/gpu-check.txt when OUT is set, with
# the test logs beside it.  A failed test does not stop the run (the
# benchmark still runs, for the numbers); a failed build does.  Exit 0
# when every step passed.
# Usage: tests/gpu/gpu-check.sh   (BUILD=dir to build or unpack elsewhere than
# /tmp/hunter-gpu-build; JOBS=n for make -j; GPU_PACK=dir, above, or
# GPU_PACK=none to build even where a .gpu-pack folder is)
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
		    tests/unit/test-cuda-gpt.log train-cuda.out train-cpu.out \
		    gpt-cuda.out gpt-cpu.out config.log; do
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
ldd --version 2>&1 | head -1
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
"$CUDA_HOME/bin/nvcc" --version 2>/dev/null | tail -2 || echo "(no nvcc)"
nproc

PACK=${GPU_PACK:-}
[ -z "$PACK" ] && [ -d "$SRC/.gpu-pack" ] && PACK=$SRC/.gpu-pack
[ "$PACK" = none ] && PACK=""
if [ -n "$PACK" ]; then
	step "programs from the pack $PACK"
	[ -f "$PACK/lib.tar.xz" ] && [ -x "$PACK/bin/hunter" ] ||
	    fail "$PACK is not a tests/gpu/gpu-pack.sh folder"
	head -1 "$PACK/MANIFEST"
	mkdir -p "$BUILD"
	rm -rf "$BUILD/lib"
	# xz may be missing where Python's lzma is not.
	tar -xJf "$PACK/lib.tar.xz" -C "$BUILD" 2>/dev/null ||
	    python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$PACK/lib.tar.xz" \
	    "$BUILD" || fail "unpacking the libraries"
	# CUDA's libraries are this machine's: the toolkit's, then the
	# nvidia-* wheels' (NCCL is not part of the toolkit).
	wheels=$(python3 -c 'import nvidia, os
for p in nvidia.__path__:
    for d in sorted(os.listdir(p)):
        if os.path.isdir(os.path.join(p, d, "lib")):
            print(os.path.join(p, d, "lib"))' 2>/dev/null | tr '\n' ':')
	LD_LIBRARY_PATH="$BUILD/lib:$CUDA_HOME/lib64:$wheels${LD_LIBRARY_PATH:-}"
	export LD_LIBRARY_PATH
	BIN=$PACK/bin
	HUNTER=$BIN/hunter TEST_CUDA=$BIN/test-cuda TEST_NVML=$BIN/test-nvml
	TEST_CUDA_GPT=$BIN/test-cuda-gpt
	NVML_SHOW=$BIN/nvml-show
	DATA=$PACK/data/fashion-mnist
	missing=$(for p in "$BIN"/*; do ldd "$p" | grep "not found"; done |
	    sort -u)
	[ -z "$missing" ] || { echo "$missing"; fail "libraries not found"; }
	echo "every library found"
else
	step "build dependencies"
	missing=""
	for m in ncursesw yaml-0.1 libssh jansson zlib cmocka; do
		pkg-config --exists "$m" 2>/dev/null || missing="$missing $m"
	done
	pkg-config --exists openblas 2>/dev/null || pkg-config --exists \
	    cblas 2>/dev/null || missing="$missing openblas"
	[ -f /usr/include/gloo/rendezvous/context.h ] ||
	    missing="$missing gloo"
	for t in gcc g++ make pkg-config; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	fresh() {	# configure and Makefile.in newer than their sources
		[ -x "$SRC/configure" ] && [ -f "$SRC/Makefile.in" ] &&
		    [ "$SRC/configure" -nt "$SRC/configure.ac" ]
	}
	if ! fresh && ! command -v autoreconf >/dev/null 2>&1; then
		missing="$missing autoconf automake"
	fi
	if [ -n "$missing" ]; then
		echo "missing:$missing; running ./bootstrap (apt-get)"
		BUILD="$BUILD" timeout 420 "$SRC/bootstrap" --with-cuda=yes -q ||
		    fail "./bootstrap could not install or build" \
		    "(missing:$missing; without a network, use tests/gpu/gpu-pack.sh)"
	else
		echo "all present"
		if ! fresh; then
			(cd "$SRC" && autoreconf -fi) || fail "autoreconf"
		elif ! command -v automake >/dev/null 2>&1; then
			# Generated files came with the tree: keep make from
			# regenerating them with tools that are not here.
			(cd "$SRC" && touch aclocal.m4 && sleep 1 &&
			    touch configure config.h.in && sleep 1 &&
			    find . -name Makefile.in -exec touch {} +)
		fi
	fi

	step "configure --with-cuda=yes and build in $BUILD"
	mkdir -p "$BUILD"
	(cd "$BUILD" && "$SRC/configure" -q --with-cuda=yes) \
	    >"$BUILD/configure.out" 2>&1 ||
	    { tail -30 "$BUILD/configure.out"; fail "configure --with-cuda=yes"; }
	grep -E "CUDA|will build" "$BUILD/configure.out"
	(cd "$BUILD" && make -j"$JOBS" >make.out 2>&1) ||
	    { tail -40 "$BUILD/make.out"; fail "make"; }
	(cd "$BUILD" && make -j"$JOBS" check TESTS= >make-check.out 2>&1) ||
	    { tail -40 "$BUILD/make-check.out"; fail "building the tests"; }
	echo "built"
	HUNTER=$BUILD/hunter TEST_CUDA=$BUILD/tests/unit/test-cuda
	TEST_NVML=$BUILD/tests/unit/test-nvml
	TEST_CUDA_GPT=$BUILD/tests/unit/test-cuda-gpt
	NVML_SHOW=$BUILD/tests/gpu/nvml-show
	DATA=/usr/share/datasets/fashion-mnist
fi
mkdir -p "$BUILD/tests/unit"
# The agents count GPUs with NVML, and a node is given cuda ranks only
# for GPUs its agent sees: point them at the driver's NVML if the loader
# would not find it by name.
if [ -z "${HUNTER_NVML_LIBRARY:-}" ]; then
	for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
	    /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		if [ -e "$d/libnvidia-ml.so.1" ]; then
			HUNTER_NVML_LIBRARY=$d/libnvidia-ml.so.1
			export HUNTER_NVML_LIBRARY
			echo "NVML: $HUNTER_NVML_LIBRARY"
			break
		fi
	done
fi

step "hunter --version"
"$HUNTER" --version || fail "hunter --version"

step "CUDA kernels and the device model against their CPU twins, nccl backend (must PASS)"
timeout 300 "$TEST_CUDA" >"$BUILD/test-cuda.out" 2>&1
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
timeout 300 "$TEST_CUDA_GPT" >"$BUILD/tests/unit/test-cuda-gpt.log" 2>&1
rc=$?
cat "$BUILD/tests/unit/test-cuda-gpt.log"
if [ "$rc" != 0 ] || grep -q "SKIPPED" "$BUILD/tests/unit/test-cuda-gpt.log"
then
	flop "test-cuda-gpt exited $rc (77: skipped)" test-cuda-gpt
else
	echo "test-cuda-gpt: PASS"
fi
if timeout 60 "$TEST_NVML" >"$BUILD/tests/unit/test-nvml.log" 2>&1; then
	echo "test-nvml: PASS"
else
	cat "$BUILD/tests/unit/test-nvml.log"
	flop "test-nvml" test-nvml
fi

step "NVML on this machine, through lib/nvml.c"
"$NVML_SHOW" || flop "tests/gpu/nvml-show" nvml-show

step "fmnist-mlp, 10 epochs, by hunter run: one GPU, then one CPU slot"
cat > "$BUILD/gpu-cluster.yaml" <<EOF
# One node, this machine, with one GPU and one CPU slot.
cluster: gpu-check
nodes:
  - {name: gpu0, host: local, rack: r1, devices: {cpu: 1, cuda: 1}}
EOF
cat > "$BUILD/summary.py" <<'EOF'
# The summary of a hunter run --json output: finished, test_acc >= 0.88.
import json, sys
objs = []
for line in open(sys.argv[1]):
    try:
        objs.append(json.loads(line))
    except ValueError:
        pass
s = [o for o in objs if o.get("t") == "summary"]
if not s or s[-1].get("state") != "finished":
    print("%s: did not finish" % sys.argv[2])
    sys.exit(1)
s = s[-1]
print("%s: test_acc %.4f, %.0f samples/s, %.1f s" % (sys.argv[2],
      s["test_acc"], s["samples_per_s"], s["wall_s"]))
open(sys.argv[1] + ".rate", "w").write("%f" % s["samples_per_s"])
sys.exit(0 if s["test_acc"] >= 0.88 else 1)
EOF
train() {	# device, label
	sed "s|^  ranks: 1|  ranks: 1\n  device: $1|; s|^model:|data: {path: $DATA}\nmodel:|" \
	    "$SRC/examples/jobs/fmnist-mlp.yaml" > "$BUILD/job-$1.yaml"
	rm -rf "$BUILD/state-$1" "$BUILD/train-$1.out.rate"
	HUNTER_STATE_DIR=$BUILD/state-$1 timeout 240 "$HUNTER" run --json \
	    --cluster "$BUILD/gpu-cluster.yaml" "$BUILD/job-$1.yaml" \
	    >"$BUILD/train-$1.out" 2>&1
	echo "exit $?" >> "$BUILD/train-$1.out"
	grep -E '"t":"(epoch|summary)"|"kind":"(failed|refused)"|^exit' \
	    "$BUILD/train-$1.out" | cut -c1-400
	python3 "$BUILD/summary.py" "$BUILD/train-$1.out" "$2"
}
train cuda "GPU" || flop "fmnist-mlp on the GPU" train-gpu
train cpu "CPU" || flop "fmnist-mlp on a CPU slot" train-cpu
if [ -f "$BUILD/train-cuda.out.rate" ] && [ -f "$BUILD/train-cpu.out.rate" ]
then
	python3 -c "import sys; print('GPU / CPU samples/s: %.2f' % (
	    float(sys.argv[1]) / float(sys.argv[2])))" \
	    "$(cat "$BUILD/train-cuda.out.rate")" \
	    "$(cat "$BUILD/train-cpu.out.rate")"
fi

step "a byte-level gpt by hunter run: one GPU, then one CPU slot"
cat "$SRC"/README.md "$SRC"/docs/*.md "$SRC"/hunter.1 "$SRC"/backend/*/*.c |
    head -c 200000 > "$BUILD/gpt-text.txt"
gpt() {	# device
	cat > "$BUILD/gpt-$1.yaml" <<EOF
name: gpu-check-gpt
resources: {ranks: 1, device: $1}
model: {type: gpt, layers: 2, heads: 4, channels: 128, context: 64}
data: {format: text, path: $BUILD/gpt-text.txt}
train:
  epochs: 1
  seed: 5
  lr: {base: 0.003, schedule: cosine, warmup_steps: 20}
  batch: {global: 16, micro: 8}
compression: {method: none}
checkpoint: {every_steps: 0, keep: 1}
EOF
	rm -rf "$BUILD/gstate-$1"
	HUNTER_STATE_DIR=$BUILD/gstate-$1 timeout 240 "$HUNTER" run --json \
	    --trace-steps 1 --cluster "$BUILD/gpu-cluster.yaml" \
	    "$BUILD/gpt-$1.yaml" >"$BUILD/gpt-$1.out" 2>&1
	echo "exit $?" >> "$BUILD/gpt-$1.out"
	grep -E '"t":"summary"|"kind":"(failed|refused)"|^exit' \
	    "$BUILD/gpt-$1.out" | cut -c1-400
}
gpt cuda
gpt cpu
python3 - "$BUILD/gpt-cuda.out" "$BUILD/gpt-cpu.out" <<'EOF' ||
# Both finished; the first step's loss and the final val_loss agree.
import json, sys
runs = []
for p in sys.argv[1:]:
    objs = []
    for line in open(p):
        try:
            objs.append(json.loads(line))
        except ValueError:
            pass
    steps = [o for o in objs if o.get("t") == "step"]
    summ = [o for o in objs if o.get("t") == "summary"]
    if not steps or not summ or summ[-1].get("state") != "finished":
        print("%s: did not finish" % p)
        sys.exit(1)
    runs.append((steps[0]["loss"], summ[-1]))
for name, (first, s) in zip(("GPU", "CPU"), runs):
    print("%s: first loss %.6f, val_loss %.4f, %.0f samples/s (x 64 "
          "tokens), %.1f s" % (name, first, s["val_loss"],
          s["samples_per_s"], s["wall_s"]))
(g1, gs), (c1, cs) = runs
print("GPU / CPU samples/s: %.2f" % (gs["samples_per_s"] /
      cs["samples_per_s"]))
ok = abs(g1 - c1) <= 1e-4 * abs(c1)
ok = ok and abs(gs["val_loss"] - cs["val_loss"]) <= 0.03 * cs["val_loss"]
sys.exit(0 if ok and gs["val_loss"] < 4.0 else 1)
EOF
	flop "the gpt on the GPU against the CPU" gpt-gpu

step "hunter bench cuda"
timeout 240 "$HUNTER" bench cuda || flop "hunter bench cuda" bench-cuda

finish 0
