#!/bin/sh
# Security: no shell injection through job fields (tests/integration/
# ssh-inject.sh covers the cluster's).  data.path, checkpoint.dir, name
# and data.dataset holding $( ), backticks, ';', '|', quotes or spaces
# are refused by `hunter validate` with file:line:col and by `hunter run`
# before anything starts; the odd but legal characters (~ + , @ = :) in
# data.path and checkpoint.dir reach the workers verbatim (the data is
# read and the checkpoints land in exactly that directory); and a job
# file whose own path holds shell syntax runs normally.  No marker file
# is ever created.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
M="$T/MARKER"
mkdata "$T/data" 256 32
small_job "$T/base.yaml" inj "$T/data"
sed -i 's/epochs: 2/epochs: 1/; s/every_steps: 0/every_steps: 4/' "$T/base.yaml"

bad() {	# bad LABEL SED-EXPRESSION: validate and run must refuse the edit
	sed "$2" "$T/base.yaml" > "$T/bad.yaml"
	! cmp -s "$T/bad.yaml" "$T/base.yaml" || fail "$1: the edit did nothing"
	rc=0
	"$HUNTER" validate "$T/bad.yaml" > "$T/validate" 2>&1 || rc=$?
	[ $rc -ne 0 ] || { cat "$T/bad.yaml"; fail "$1: hunter validate accepted it"; }
	grep -q "^$T/bad.yaml:[0-9]*:[0-9]*: " "$T/validate" ||
		{ cat "$T/validate"; fail "$1: no file:line:col error"; }
	rc=0
	"$HUNTER" run --json "$T/bad.yaml" > "$T/run" 2>&1 || rc=$?
	[ $rc -ne 0 ] || fail "$1: hunter run accepted it"
	grep -q '"kind":"started"' "$T/run" && fail "$1: a rank started"
	[ ! -e "$M" ] || fail "$1: the marker was created"
	echo "refused $1: $(head -n 1 "$T/validate" | sed "s|$T/||")"
}
bad 'data.path with $()'        "s|path: $T/data|path: \"$T/data\$(touch $M)\"|"
bad 'data.path with backticks'  "s|path: $T/data|path: \"$T/\`touch $M\`\"|"
bad 'data.path with ;'          "s|path: $T/data|path: \"$T/data;touch $M\"|"
bad 'data.path with |'          "s#path: $T/data#path: \"$T/data|touch $M\"#"
bad 'data.path with space'      "s|path: $T/data|path: \"$T/da ta\"|"
bad "data.path with '"          "s|path: $T/data|path: \"$T/d'; touch $M; '\"|"
bad 'checkpoint.dir with $()'   "s|keep: 3|keep: 3, dir: \"$T/ck\$(touch $M)\"|"
bad 'checkpoint.dir with ;'     "s|keep: 3|keep: 3, dir: \"$T/ck;touch $M\"|"
bad 'checkpoint.dir with quote' "s|keep: 3|keep: 3, dir: '$T/ck\"x'|"
bad 'checkpoint.dir with newline' "s|keep: 3|keep: 3, dir: \"$T/ck\\\\ntouch $M\"|"
bad 'name with $()'             "s|^name: inj|name: \"inj\$(touch $M)\"|"
bad 'name with ;'               "s|^name: inj|name: \"inj;touch $M\"|"
bad 'name with /'               "s|^name: inj|name: \"../inj\"|"
bad 'dataset with $()'          "s|data: {|data: {dataset: \"x\$(touch $M)\", |"

# Legal but shell-special characters arrive verbatim.
odd="$T/odd~d+a,t@a=x:y"
cp -r "$T/data" "$odd"
ck="$T/ck~p+q,r@s=t:u"
sed "s|path: $T/data|path: \"$odd\"|; s|keep: 3|keep: 3, dir: \"$ck\"|" "$T/base.yaml" > "$T/ok.yaml"
"$HUNTER" validate "$T/ok.yaml" || fail "the odd but legal job was refused"
# and the job file's own path holds shell syntax (it never meets a shell)
# (run from $T, so that a relative "touch MARKER" would make $M)
jdir="$T/jobs \$(touch MARKER);\`touch MARKER\`"
mkdir -p "$jdir"
cp "$T/ok.yaml" "$jdir/ok \$(touch MARKER)|touch MARKER.yaml"
(cd "$T" && "$HUNTER" run --json "$jdir/ok \$(touch MARKER)|touch MARKER.yaml") > "$T/ok" 2>&1 ||
	{ tail -n 5 "$T/ok"; fail "the odd but legal job did not run"; }
[ "$(jget "$T/ok" summary state)" = finished ] || fail "the odd job did not finish"
ls "$ck"/step-*.safetensors > /dev/null 2>&1 || { ls -la "$T"; fail "no checkpoint in $ck"; }
[ ! -e "$M" ] || fail "the marker was created"
pass "metacharacters in job fields are refused; odd paths arrive verbatim; nothing ran"
