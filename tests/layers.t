#!/usr/bin/env bash
# The layers of daemon/, as daemon/README lists them: every file is listed, no include goes
# to a higher layer, and the packet path (engine, alert, events, workers) sees the matcher
# through its view (match_view.h), never its builder (match.h).
. "$(dirname "$0")/tap.sh"
plan 4
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
done_testing
