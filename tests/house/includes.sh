#!/bin/sh
# The house rule (docs/architecture.md, "Floors"): every #include of ours
# points down a floor or stays on its own, and a private header
# (NAME-internal.h, .cuh) is included only from its own folder.  The
# floors, bottom up, are the words of FLOORS; a file's floor is its
# folder (backend/X is X).  It also fails on a comment that cites a file
# outside the tree (the design notes the project started from), or a
# file of ours that is not there (cites.py).
# Run by make check over $SRCDIR; prints each offending line.
set -eu
top=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top"
FLOORS="lib kernels spec proto comm worker agent fleet sched core tui bench cmd"

floor_of() {
	case $1 in
	lib/*) echo lib ;;
	kernels/*) echo kernels ;;
	backend/*/*) d=${1#backend/}; echo "${d%%/*}" ;;
	tui/* | bench/* | cmd/*) echo "${1%%/*}" ;;
	*) echo "" ;;
	esac
}

rank_of() {
	i=0
	for f in $FLOORS; do
		[ "$f" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo ""
}

bad=0
files=$(find lib kernels backend tui bench cmd -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) | sort)
for f in $files; do
	ff=$(floor_of "$f")
	fr=$(rank_of "$ff")
	[ -n "$fr" ] || { echo "$f: not on any floor"; bad=1; continue; }
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' > "${TMPDIR:-/tmp}/inc.$$" || true
	while read -r line inc; do
		case $inc in
		*/*) ;;
		*) continue ;;	# same-folder and generated headers
		esac
		tf=$(floor_of "$inc")
		[ -n "$tf" ] || continue	# config.h, build-id.h
		tr=$(rank_of "$tf")
		if [ "$tr" -gt "$fr" ]; then
			echo "$f:$line: includes $inc: $tf is above $ff"
			bad=1
		fi
		case $inc in
		*-internal.h | *.cuh)
			if [ "$(dirname "$inc")" != "$(dirname "$f")" ]; then
				echo "$f:$line: includes $inc, private to $(dirname "$inc")"
				bad=1
			fi ;;
		esac
	done < "${TMPDIR:-/tmp}/inc.$$"
	rm -f "${TMPDIR:-/tmp}/inc.$$"
done

# Comments that cite what is not in the tree.
if grep -rn -E 'DESIGN\.md|RECIPES\.md|STYLE\.md|\.\./shared' lib kernels backend tui bench cmd tests examples configure.ac Makefile.am \
	--include='*.c' --include='*.h' --include='*.cc' --include='*.cu' --include='*.cuh' \
	--include='*.sh' --include='*.py' --include='*.inc' --include='*.yaml' \
	--include='*.ac' --include='*.am' 2>/dev/null | grep -v '^tests/house/'; then
	echo "the lines above cite files that are not in this tree"
	bad=1
fi
# Comments that cite a file of ours that is not there (renamed, gone,
# never written): tests/house/cites.py reads every comment.
if ! "${PYTHON:-/usr/bin/python3}" "$top/tests/house/cites.py" "$top"; then
	echo "the lines above cite files that are not in this tree"
	bad=1
fi
[ $bad = 0 ] && echo "includes: every include points down a floor; no citation leaves the tree"
exit $bad
