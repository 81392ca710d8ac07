# tui-lib.sh: shared by the console tests, after tests/integration/lib.sh.
# Each test drives the real console in a real tmux on a private socket
# (-L, no config) and reads the screen with capture-pane, polling with a
# deadline instead of sleeping.  The tmux server dies in the trap, before
# lib.sh stops the agents.
command -v tmux > /dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
SOCK="hunter-tui-$$"
cleanup_hooks="tui_stop; $cleanup_hooks"
export LANG=C.UTF-8
unset LC_ALL NO_COLOR
export HUNTER_THEME_DIR="$SRCDIR/themes"
export XDG_CONFIG_HOME="$T/config"	# no user config.yaml

tm() { tmux -L "$SOCK" "$@"; }

# tui_start CMD: run CMD in a 120x40 pane (TUI_W x TUI_H when set), TERM
# tmux-256color unless TUI_TERM says otherwise.  CMD's pid goes to
# $T/console.pid; when it exits the pane shows "[exit STATUS]" under what
# it printed, and stays.
tui_start() {
	tui_script "$@"
	tm -f /dev/null new-session -d -s t -x "${TUI_W:-120}" -y "${TUI_H:-40}" \
	    "sh $T/pane.sh"
}

# tui_respawn CMD: the same pane, a new command.
tui_respawn() {
	tui_script "$@"
	tm respawn-pane -k -t t "sh $T/pane.sh"
}

tui_script() {
	cat > "$T/pane.sh" <<PANE
cd "$T"
export TERM=${TUI_TERM:-tmux-256color} HUNTER_STATE_DIR="$HUNTER_STATE_DIR"
sh -c 'echo \$\$ >> "$T/console.pid"; exec $*'
echo "[exit \$?]"
exec sleep 600
PANE
}

# Whether CMD has exited: its "[exit N]" line is on the screen.
exited() { screen | grep -qE '^\[exit [0-9]+\]$'; }

# The trap: the tmux server goes, then every console the test started
# must be gone before lib.sh stops the agents (a live backend would start
# them again).
tui_stop() {
	tm kill-server 2>/dev/null || true
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
	for p in $(cat "$T/console.pid" 2>/dev/null); do
		for i in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
	done
}

screen() { tm capture-pane -p -t t; }
keys() { tm send-keys -t t "$@"; }

# screen_has ERE: whether the screen matches now; it is left in $T/screen.
screen_has() {
	screen > "$T/screen" 2>/dev/null || true
	grep -qE -- "$1" "$T/screen"
}

# screen_wait ERE [SECONDS]: until the screen matches (0), or 1 after
# SECONDS (20); the screen is left in $T/screen either way.  (lib.sh's
# wait_for waits for a file.)
screen_wait() { poll_until "${2:-20}" screen_has "$1"; }

# need ERE [SECONDS] WHAT: screen_wait or fail, showing the screen.
need() {
	screen_wait "$1" "${2:-20}" || { cat "$T/screen"; fail "$3 (no /$1/ on screen)"; }
}

# The step of the job screen's summary line ("... step 123 ..."), or
# nothing while it is unknown.
job_step() {
	screen | grep -m1 ' epoch [0-9]*/[0-9]* *step ' |
	    sed -n 's/.* step \([0-9][0-9]*\) .*/\1/p'
}

# step_advances SECONDS: the job screen's step grows within SECONDS.
step_advances() {
	_s0=$(job_step)
	_end=$(( $(date +%s) + $1 ))
	while [ "$(date +%s)" -lt "$_end" ]; do
		sleep 0.5
		_s1=$(job_step)
		[ -n "$_s0" ] && [ -n "$_s1" ] && [ "$_s1" -gt "$_s0" ] && return 0
		[ -z "$_s0" ] && _s0=$_s1
	done
	return 1
}

# tui_job FILE NAME: a 2-rank job that runs for well over a minute.
tui_job() {
	[ -d "$T/data" ] || mkdata "$T/data" 2000 64
	small_job "$1" "$2" "$T/data"
	sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 1000/; s/hidden: \[32\]/hidden: [256, 256]/; s/micro: 32/micro: 4/' "$1"
}

# skip_if_refused CMD: after a command that did not take effect, look at
# the job's events on the logs screen; if the backend does not know CMD
# yet, skip (77) naming it.
skip_if_refused() {
	keys 4
	if screen_wait "unknown command '$1'" 5; then
		echo "SKIP: the backend does not implement the \"$1\" command yet"
		exit 77
	fi
}
