#!/bin/sh
# Metrics in the console: `metrics: {listen: ...}` in config.yaml opens
# the Prometheus endpoint of the console's backend; a scrape while its
# job trains has the job running and both ranks' steps.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
export PYTHONPATH="$SRCDIR/tests/integration"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$XDG_CONFIG_HOME/hunter"
printf 'metrics:\n  listen: 127.0.0.1:%s\n' "$port" > "$XDG_CONFIG_HOME/hunter/config.yaml"
tui_job "$T/j.yaml" tuimetrics
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'tuimetrics +running' 20 "the job is not in the job table"
"$PY" - "http://127.0.0.1:$port/metrics" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 30
while True:
    try:
        s = promtext.parse(promtext.fetch(sys.argv[1]))
        if all(promtext.pick(s, "hunter_rank_step", job="tuimetrics", rank=r)
               for r in (0, 1)):
            break
    except OSError:
        pass
    assert time.time() < end, "no step series from the console's endpoint"
    time.sleep(0.3)
assert promtext.pick(s, "hunter_job_state", job="tuimetrics", state="running") == [1]
print("steps %s" % [promtext.pick(s, "hunter_rank_step", rank=r)[0] for r in (0, 1)])
PYEOF
pass "the console serves its metrics from config.yaml's metrics.listen"
