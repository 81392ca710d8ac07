# replay-lib.sh: replay_corpus NAME replays tests/fuzz/corpus/NAME through
# the fuzz target tests/fuzz/fuzz-NAME (built with replay.c when configure
# was not given --enable-fuzzing) under whatever sanitizers the build has.
# It fails when the target crashes, when nothing was replayed, when an
# input named valid-* is refused or one named bad-* is accepted (so the
# seeds stay in step with the formats they stand for).
replay_corpus() {
	bin="$BUILDDIR/tests/fuzz/fuzz-$1"
	corpus="$SRCDIR/tests/fuzz/corpus/$1"
	log=$(mktemp /tmp/hunter-replay.XXXXXX)
	if ! out=$(FUZZ_DEBUG=1 "$bin" "$corpus" 2>"$log"); then
		tail -n 30 "$log"
		rm -f "$log"
		echo "fuzz-$1 failed: $out"
		return 1
	fi
	echo "$out"
	rc=0
	awk '
	/^replay: / { name = $2; next }
	/^fuzz: accepted/ { if (name ~ /^bad-/) { print "accepted: " name; bad = 1 } ; n++; next }
	/^fuzz: refused/ { if (name ~ /^valid-/) { print "refused: " name " (" $0 ")"; bad = 1 }; n++; next }
	END { if (n == 0) { print "no verdicts"; bad = 1 }; exit bad }' "$log" || rc=1
	rm -f "$log"
	case $out in
	replayed\ 0\ *|"") echo "no inputs replayed"; return 1 ;;
	replayed*) return $rc ;;
	*) return 1 ;;
	esac
}
