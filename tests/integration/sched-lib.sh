# sched-lib.sh: shared by the scheduler's live tests, after lib.sh.
# sched_config INTERVAL RESTART: the user's config.yaml gives the
# embedded cluster's scheduler a short interval (lib.sh points
# XDG_CONFIG_HOME at the test's own directory).
sched_config() {
	mkdir -p "$XDG_CONFIG_HOME/hunter"
	printf 'scheduler: {policy: goodput, interval: %s, restart: %s}\n' \
	    "$1" "$2" > "$XDG_CONFIG_HOME/hunter/config.yaml"
}

# resizes OUT JOB: "from->to" for each resized event of JOB, in order.
resizes() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        o = json.loads(l)
        if o.get("t") == "event" and o.get("kind") == "resized" and o.get("job") == sys.argv[2]:
            print("%d->%d" % (o["from"], o["to"]))
PYEOF
}
