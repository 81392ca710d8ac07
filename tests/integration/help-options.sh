#!/bin/sh
# --help of the console and of every subcommand exits 0 and names every
# option that hunter.1 gives it (its SYNOPSIS lines and its paragraph in
# COMMANDS), and every option it lists is in hunter.1; every command that
# hunter --help lists has its paragraph in COMMANDS, and every key of a
# cluster file its entry in CLUSTER FILES.  A bad option exits 2 and says
# how to list them.
. "$SRCDIR/tests/integration/lib.sh"
"$HUNTER" --help > "$T/top" || fail "hunter --help exited $?"
cmds=$(sed -n 's/^  hunter \([a-z][a-z]*\) .*/\1/p' "$T/top" | sort -u)
[ -n "$cmds" ] || fail "hunter --help lists no command"
for c in $cmds; do
	rc=0
	"$HUNTER" "$c" --help > "$T/help.$c" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$T/help.$c"; fail "hunter $c --help exited $rc"; }
	grep -q "^usage: hunter $c" "$T/help.$c" || fail "hunter $c --help: no usage"
	"$HUNTER" "$c" -h > "$T/h" 2>&1 && cmp -s "$T/h" "$T/help.$c" ||
		fail "hunter $c -h is not its --help"
done
cp "$T/top" "$T/help.console"
"$PY" - "$SRCDIR/hunter.1" "$T" $cmds <<'PYEOF' || fail "see above"
import re, sys
man, d, cmds = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3:]
def opts(text):
    return {o.replace("\\-", "-") for o in
            re.findall(r"\\-\\-([a-z][a-z0-9]*(?:\\-[a-z0-9]+)*)", text)}
syn = man.split(".SH SYNOPSIS")[1].split(".SH ")[0]
forms = {}
for form in syn.split(".br"):
    m = re.search(r"^\.B hunter(?: ([a-z]+))?", form.strip(), re.M)
    name = m.group(1) if m and m.group(1) not in (None,) else "console"
    if name not in cmds:
        name = "console"
    forms.setdefault(name, set()).update(opts(form))
commands = man.split(".SH COMMANDS")[1].split("\n.SH ")[0]
paras = {}
for p in commands.split(".TP\n")[1:]:
    m = re.match(r"\.B ([a-z]+)\n", p)
    assert m, "a COMMANDS paragraph without its name: %r" % p[:40]
    paras[m.group(1)] = p
console = man.split(".SH THE CONSOLE")[1].split("\n.SH ")[0]
bad = 0
for c in cmds + ["console"]:
    helptext = open("%s/help.%s" % (d, c)).read()
    listed = set(re.findall(r"^  (?:-[a-zA-Z], |    )--([a-z][a-z0-9-]*)",
                            helptext, re.M)) - {"help"}
    if c != "console" and c not in paras:
        print("hunter.1 has no COMMANDS paragraph for %s" % c)
        bad = 1
    inman = forms.get(c, set()) | opts(paras.get(c, "") if c != "console"
                                       else console)
    if c == "console":
        inman -= {"version", "help"}
    for o in sorted(inman - listed):
        print("hunter.1 gives %s --%s; its --help does not name it" % (c, o))
        bad = 1
    for o in sorted(listed - inman):
        print("%s --help lists --%s; hunter.1 does not give it" % (c, o))
        bad = 1
    print("%-9s %2d options, each in hunter.1 and in --help" % (c, len(listed)))
sys.exit(bad)
PYEOF
# Every key of a cluster file (the tables of backend/spec/spec-cluster.c)
# has its entry in hunter.1's CLUSTER FILES.
"$PY" - "$SRCDIR/hunter.1" "$SRCDIR/backend/spec/spec-cluster.c" <<'PYEOF' || fail "see above"
import re, sys
man, src = open(sys.argv[1]).read(), open(sys.argv[2]).read()
assert "\n.SH CLUSTER FILES\n" in man, "hunter.1 has no CLUSTER FILES section"
sec = man.split("\n.SH CLUSTER FILES\n")[1].split("\n.SH ")[0]
keys = sorted(set(re.findall(r'\.key = "([a-z_]+)"', src)))
said = set(re.findall(r'^\.BI? "?([a-z_]+)', sec, re.M)) | \
    set(re.findall(r'[{,] ?([a-z_]+): ', sec))
missing = [k for k in keys if k not in said]
print("cluster keys: %d, in CLUSTER FILES: %s" % (len(keys),
      "all" if not missing else "not " + ", ".join(missing)))
sys.exit(1 if missing else 0)
PYEOF
set +e
"$HUNTER" run --jsno x.yaml > "$T/out" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "unknown option '--jsno' (did you mean --json?); hunter run --help lists the options" "$T/out" ||
	{ cat "$T/out"; fail "a bad option: exit $rc"; }
pass "--help of $(echo $cmds | wc -w) commands and the console: exit 0, the man page's options named"
