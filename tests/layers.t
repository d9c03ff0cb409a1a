#!/usr/bin/env bash
# The layers of daemon/, as daemon/README lists them: every file is listed, no include goes
# to a higher layer, and the packet path (engine, alert, events, workers) sees the matcher
# through its view (match_view.h), never its builder (match.h); no files call each other round
# a circle (from the symbols of the built objects); no source file of 1,000 lines or more (a
# file owns one part: past that, it owns two); every header opens saying what it is; a family's *_internal.h is included by that family alone.
. "$(dirname "$0")/tap.sh"
plan 8
here=$(cd "$(dirname "$0")/.." && pwd)
check() { # check MODE: the problems found (none: empty)
	python3 - "$here" "$1" <<'PY'
import os, re, sys
root, mode = sys.argv[1], sys.argv[2]
order, layer_of, layer = [], {}, None
for line in open(os.path.join(root, "daemon/README")):
    m = re.match(r"^(core|packet|io|service) \(", line)
    if m:
        layer = m.group(1)
        order.append(layer)
        continue
    m = re.match(r"^    ([a-z_0-9]+)(\s|$)", line)
    if m and layer:
        layer_of[m.group(1)] = layer
files = sorted(f for f in os.listdir(os.path.join(root, "daemon")) if re.match(r"^[a-z_0-9]+\.[ch]$", f))
for f in files:
    name = f.rsplit(".", 1)[0]
    if mode == "listed":
        if name not in layer_of:
            print(f"daemon/{f}: not in daemon/README")
        continue
    if name not in layer_of:
        continue
    for n, line in enumerate(open(os.path.join(root, "daemon", f)), 1):
        m = re.match(r'#include "([a-z_0-9]+)\.h"', line)
        if not m:
            continue
        inc = m.group(1)
        if mode == "upward" and inc in layer_of and order.index(layer_of[inc]) > order.index(layer_of[name]):
            print(f"daemon/{f}:{n}: {layer_of[name]} includes {inc}.h of {layer_of[inc]}")
        if mode == "view" and name in ("engine", "alert", "events", "workers", "frame") and inc == "match":
            print(f"daemon/{f}:{n}: the packet path includes match.h, the builder: match_view.h")
if mode == "layers" and order != ["core", "packet", "io", "service"]:
    print("daemon/README: the layers are not core, packet, io, service:", order)
PY
}
for mode in layers listed upward view; do
	out=$(check $mode)
	case $mode in
	layers) is "$out" "" "daemon/README lists the four layers, in order" ;;
	listed) is "$out" "" "every file of daemon/ is in daemon/README" ;;
	upward) is "$out" "" "no file includes from a layer above its own" ;;
	view) is "$out" "" "the packet path includes the matcher's view, not its builder" ;;
	esac
done
# Which file's object uses which file's symbols; a circle among them is a family that is not a tree.
circles=$(python3 - "$BUILD/daemon" <<'PY'
import os, subprocess, sys
d = sys.argv[1]
objs = sorted(f for f in os.listdir(d) if f.endswith(".o")) if os.path.isdir(d) else []
if not objs:
    print("SKIP")
    sys.exit()
defined, used = {}, {}
for o in objs:
    name = o[:-2]
    for line in subprocess.run(["nm", os.path.join(d, o)], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDRB":
            defined[f[2]] = name
        elif len(f) == 2 and f[0] == "U":
            used.setdefault(name, set()).add(f[1])
calls = {n: sorted({defined[s] for s in syms if s in defined and defined[s] != n}) for n, syms in used.items()}
state, found = {}, []
def visit(n, path):
    state[n] = 1
    for m in calls.get(n, []):
        if state.get(m) == 1:
            found.append(" -> ".join(path[path.index(m):] + [m]))
        elif m not in state:
            visit(m, path + [m])
    state[n] = 2
for n in sorted(calls):
    if n not in state:
        visit(n, [n])
print("\n".join(found))
PY
)
if [ "$circles" = SKIP ]; then
	echo "ok $((tap_n += 1)) # SKIP no objects in $BUILD/daemon (build first)"
else
	is "$circles" "" "no files of daemon/ call each other round a circle"
fi
untold=$(for h in "$here"/daemon/*.h; do b=$(basename "$h"); head -n 1 "$h" | grep -q "^/\* $b - ..* \*/\$" || echo "$b"; done)
is "$untold" "" "every header's first line says what it is (/* name.h - ... */)"
strangers=$(cd "$here/daemon" && for h in *_internal.h; do
	family=${h%_internal.h}
	grep -l "#include \"$h\"" *.c *.h | grep -v -e "^$family\.[ch]\$" -e "^${family}_[a-z_]*\.[ch]\$" | sed "s|\$| includes $h|"
done)
is "$strangers" "" "a family's *_internal.h is included by that family's files alone"
long=$(wc -l "$here"/daemon/*.c | awk '$2 != "total" && $1 >= 1000 { sub(".*/", "", $2); print $2 " " $1 }')
is "$long" "" "every daemon source is under 1,000 lines"
done_testing
