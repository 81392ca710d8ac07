#!/bin/sh
# tests/gpu/gpu-pack.sh: prepare, on a build machine, what tests/gpu/gpu-check.sh
# needs on a GPU machine that has CUDA but none of hunter's build
# dependencies and no network (the lent H200 machines: see
# docs/architecture.md, "The GPU path").  It builds hunter with
# --with-cuda=yes out of tree and puts into one folder:
#   bin/      hunter, tests/unit/test-cuda, test-cuda-gpt, test-nvml (with
#             libfake-nvml.so beside it) and nvml-show;
#   lib.tar.xz  the shared libraries they load that are not glibc, the
#             C++ runtime or CUDA's (Gloo, OpenBLAS, libyaml, jansson,
#             libssh, ncurses, cmocka and what those need), compressed;
#   data/fashion-mnist/  the dataset, from dataset-fashion-mnist;
#   MANIFEST  what went in, with the library each name resolved to.
# CUDA's own libraries (cudart, cuBLAS, NCCL) are the GPU machine's: its
# toolkit in /usr/local/cuda and, for NCCL, the nvidia-* Python wheels
# there; gpu-check.sh finds them.  The folder is about 40 MB.
#
# Usage: tests/gpu/gpu-pack.sh [DIR]   (default .gpu-pack in the source tree;
# add it to .git/info/exclude and name it in the device tool's carry).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
PACK=${1:-$SRC/.gpu-pack}
BUILD=${BUILD:-/tmp/hunter-gpu-pack-build}
JOBS=${JOBS:-$(nproc)}
DATA=/usr/share/datasets/fashion-mnist

die() { echo "gpu-pack: $*" >&2; exit 1; }

[ -x /usr/local/cuda/bin/nvcc ] || die "no /usr/local/cuda/bin/nvcc here"
[ -f "$DATA/train-images-idx3-ubyte.gz" ] ||
	die "no dataset in $DATA (apt-get install dataset-fashion-mnist)"
[ -x "$SRC/configure" ] || die "no configure: run ./bootstrap first"

echo "== build with --with-cuda=yes in $BUILD"
mkdir -p "$BUILD"
(cd "$BUILD" && "$SRC/configure" -q --with-cuda=yes) ||
	die "configure --with-cuda=yes failed"
make -C "$BUILD" -j"$JOBS" hunter tests/unit/test-cuda \
	tests/unit/test-cuda-gpt tests/unit/test-nvml tests/unit/libfake-nvml.so \
	tests/gpu/nvml-show >"$BUILD/make.out" 2>&1 ||
	{ tail -30 "$BUILD/make.out"; die "make failed"; }

echo "== pack into $PACK"
rm -rf "$PACK"
mkdir -p "$PACK/bin" "$PACK/lib" "$PACK/data/fashion-mnist"
for p in hunter tests/unit/test-cuda tests/unit/test-cuda-gpt \
    tests/unit/test-nvml \
    tests/unit/libfake-nvml.so tests/gpu/nvml-show; do
	cp "$BUILD/$p" "$PACK/bin/"
done
cp "$DATA"/*-ubyte.gz "$PACK/data/fashion-mnist/"

# Every library the programs load, less glibc, the C++ runtime (the GPU
# machine's is as new or newer) and CUDA's (the GPU machine's own).
keep() {
	case "$1" in
	*/libc.so.*|*/libm.so.*|*/libdl.so.*|*/libpthread.so.*|*/librt.so.*|\
	*/ld-linux*|*/libresolv.so.*|*/libstdc++.so.*|*/libgcc_s.so.*|\
	/usr/local/cuda/*|*/libcuda.so*|*/libnvidia-*)
		return 1;;
	esac
	return 0
}
: > "$PACK/MANIFEST"
for p in "$PACK"/bin/*; do
	ldd "$p" | while read -r name arrow path rest; do
		[ "$arrow" = "=>" ] && [ -f "$path" ] || continue
		if keep "$path"; then
			cp -L "$path" "$PACK/lib/$name"
			echo "$name $path" >> "$PACK/MANIFEST"
		fi
	done
done
sort -u -o "$PACK/MANIFEST" "$PACK/MANIFEST"
(cd "$PACK" && tar -cJf lib.tar.xz lib && rm -rf lib)
{
	echo "hunter $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null ||
	    echo unknown), packed $(date -u +%Y-%m-%dT%H:%MZ) on" \
	    "$(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version |
	    head -1 | sed 's/.* //') glibc"
	cat "$PACK/MANIFEST"
} > "$PACK/MANIFEST.new"
mv "$PACK/MANIFEST.new" "$PACK/MANIFEST"
du -sh "$PACK"
echo "gpu-pack: done; on the GPU machine: GPU_PACK=$PACK tests/gpu/gpu-check.sh"
