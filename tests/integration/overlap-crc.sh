#!/bin/sh
# train.overlap: the exchange summed bucket by bucket during the backward
# ends with the parameters of the same job without overlap, bit for bit
# (the final params crc): the mlp on 2 ranks dense and with top-k, and
# the gpt on 4 ranks dense and with ZeRO-1.  The buckets are small
# (bucket_size), so that each job has several.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
mlp() {	# FILE METHOD OVERLAP
	cat > "$1" <<YEOF
name: overlap-mlp
resources: {ranks: 2, placement: spread}
model: {type: mlp, hidden: [128, 64]}
train:
  epochs: 1
  seed: 7
  overlap: $3
  bucket_size: 16KiB
  optimizer: {type: sgd, momentum: 0.9, weight_decay: 5e-4}
  lr: {base: 0.1, schedule: cosine, warmup_steps: 50}
  batch: {global: 256, micro: 64}
compression: {method: $2, density: 0.01}
checkpoint: {every_steps: 0, keep: 1}
YEOF
}
crc() {	# OUT: the final params crc of every rank, one line
	grep '"kind": *"finished"' "$1" | grep -o '"params_crc32": *"[0-9a-f]*"' |
		grep -o '[0-9a-f]\{8\}' | sort -u | tr '\n' ' '
}
run() {	# NAME FILE
	HUNTER_STATE_DIR="$T/$1" "$HUNTER" run --json "$2" > "$T/$1.out" ||
		fail "$1: hunter run exited $?"
	HUNTER_STATE_DIR="$T/$1" stop_agents
}
gpt_text "$T/text.txt" 5000
for ov in false true; do
	for m in none topk; do
		mlp "$T/mlp-$m-$ov.yaml" $m $ov
		run "mlp-$m-$ov" "$T/mlp-$m-$ov.yaml"
	done
	for z in 0 1; do
		gpt_job "$T/gpt-$z-$ov.yaml" overlap-gpt "$T/text.txt" 4 \
		    "  overlap: $ov
  bucket_size: 16KiB
  zero: $z"
		run "gpt-$z-$ov" "$T/gpt-$z-$ov.yaml"
	done
done
for j in mlp-none mlp-topk gpt-0 gpt-1; do
	off=$(crc "$T/$j-false.out") on=$(crc "$T/$j-true.out")
	b=$(grep -o 'overlapped, buckets: [0-9]*' "$T/$j-true.out" | head -1)
	echo "$j: overlap off $off, on $on (${b:-not overlapped})"
	[ -n "$off" ] && [ "$(echo $off | wc -w)" = 1 ] || fail "$j: no one crc: $off"
	[ "$off" = "$on" ] || fail "$j: overlap changed the parameters"
	case $j in
	mlp-topk) [ -z "$b" ] || fail "$j: a compressed exchange overlapped" ;;
	*) [ -n "$b" ] || fail "$j: the exchange did not overlap" ;;
	esac
done
pass "overlap on and off end with the same parameters, dense, top-k and ZeRO-1"
