#!/bin/sh
# ZeRO-1 (train.zero: 1): a 4-rank gpt run stopped after its first epoch
# leaves the checkpoint an unsharded run leaves (the shards gathered: the
# same bytes), and resumed from it on 2 ranks and on 1 rank it follows
# the loss trajectory of the unsharded run resumed the same way, to the
# same final checkpoint.  grad_clip is 0 so that every sum has one order
# and the runs agree bit for bit; each rank's optimizer state is a
# quarter of the whole on 4 ranks.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 6000
for z in 0 1; do
	gpt_job "$T/z$z.yaml" zero-resume "$T/text.txt" 4 "  epochs: 2
  grad_clip: 0
  zero: $z" "checkpoint: {every_steps: 0, keep: 5}"
	sed -i -e 's/^  epochs: 1$//' \
	    -e 's/^checkpoint: {every_steps: 0, keep: 2}$//' "$T/z$z.yaml"
	HUNTER_STATE_DIR="$T/s$z" "$HUNTER" run --json --stop-after-epochs 1 \
	    "$T/z$z.yaml" > "$T/z$z-4.out" || fail "zero $z, 4 ranks: exit $?"
	HUNTER_STATE_DIR="$T/s$z" stop_agents
	[ "$(jget "$T/z$z-4.out" summary state)" = stopped ] ||
		fail "zero $z: the first epoch did not stop"
	for n in 2 1; do
		rm -rf "$T/r$z-$n"
		mkdir -p "$T/r$z-$n/checkpoints"
		cp -r "$T/s$z/checkpoints/zero-resume" "$T/r$z-$n/checkpoints/"
		sed "s/ranks: 4,/ranks: $n,/" "$T/z$z.yaml" > "$T/z$z-$n.yaml"
		HUNTER_STATE_DIR="$T/r$z-$n" "$HUNTER" run --json --resume \
		    --trace-steps 100000 "$T/z$z-$n.yaml" > "$T/z$z-$n.out" ||
			fail "zero $z, resumed on $n: exit $?"
		HUNTER_STATE_DIR="$T/r$z-$n" stop_agents
		grep -q '"kind": *"restarted".*resumed from' "$T/z$z-$n.out" ||
			fail "zero $z on $n ranks did not resume"
	done
done
a=$(ls "$T/s0/checkpoints/zero-resume/"*.safetensors | tail -1)
b=$(ls "$T/s1/checkpoints/zero-resume/"*.safetensors | tail -1)
echo "4 ranks, stopped: $(basename "$a") $(sha256sum < "$a" | cut -c1-16)" \
    "(unsharded) $(sha256sum < "$b" | cut -c1-16) (ZeRO-1)"
cmp -s "$a" "$b" || fail "the ZeRO-1 checkpoint differs from the unsharded one"
"$PY" - "$T" <<'PYEOF' || fail "the resumed runs differ"
import json, sys
T = sys.argv[1]
def run(name):
    o = [json.loads(l) for l in open("%s/%s.out" % (T, name))]
    s = [x for x in o if x.get("t") == "summary"][-1]
    return [x["loss"] for x in o if x.get("t") == "step"], s
z4, p4 = run("z1-4")[1], run("z0-4")[1]
print("optimizer bytes a rank on 4 ranks: ZeRO-1 %d, unsharded %d (%.3f)" % (
    z4["optimizer_bytes"], p4["optimizer_bytes"],
    z4["optimizer_bytes"] / p4["optimizer_bytes"]))
assert z4["optimizer_bytes"] <= p4["optimizer_bytes"] / 4 * 1.05
for n in (2, 1):
    (lz, sz), (lp, sp) = run("z1-%d" % n), run("z0-%d" % n)
    worst = max(abs(a - b) / abs(b) for a, b in zip(lz, lp))
    print("resumed on %d: %d steps, loss %.6f .. %.6f, worst relative "
          "difference from the unsharded run %.1e" % (n, len(lz), lz[0],
          lz[-1], worst))
    assert len(lz) == len(lp) and len(lz) > 10, (len(lz), len(lp))
    assert worst == 0, worst
PYEOF
for n in 2 1; do
	a=$(ls "$T/r0-$n/checkpoints/zero-resume/"*.safetensors | tail -1)
	b=$(ls "$T/r1-$n/checkpoints/zero-resume/"*.safetensors | tail -1)
	cmp -s "$a" "$b" || fail "resumed on $n: the final checkpoints differ"
done
pass "a ZeRO-1 checkpoint of 4 ranks resumes on 2 and on 1 as an unsharded one does"
