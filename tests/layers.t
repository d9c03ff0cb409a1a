#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# daemon/'s four layers, a folder each (core, packet, io, service; daemon/README says what each
# holds): every source is in one; the build compiles a layer's files with its own and the lower
# layers' headers alone, so an include that goes up does not compile (a probe shows it), and
# each layer's library links with the ones below it alone, so a call that goes up does not link
# (the packet layer's with no libpcap, libevent or hiredis); the packet path (engine, alert,
# events, workers) sees the matcher through its view (matcher_view.h), never its builder
# (matcher.h); the entry set has one owner, lists.c, the one daemon file to include matcher.h and
# call what changes the matcher, but for daemon/README's list; no files call each other round a circle (from the symbols of the built objects);
# io/ is a folder per subsystem, each calling its own, sys/'s and lower layers' functions alone
# but for the calls daemon/README lists; every function a header exports is called elsewhere;
# no file keeps writable state in a static but those daemon/README lists;
# no source file of 1,000 lines or more (a file owns one part: past that, it owns two); every
# header opens saying what it is; a family's *_internal.h is included by that family alone;
# struct service is 15 members at most, and each part of it that a header declares "Owned
# by" some files is touched by those files alone (the service files call it s).
. "$(dirname "$0")/support/tap.sh"
plan 20
here=$(cd "$(dirname "$0")/.." && pwd)
layers="core packet io service"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The checks of calls read the built objects: what is not built is built first.
ls "$BUILD"/daemon/io/*/*.o >/dev/null 2>&1 || make -s -C "$here" BUILD="$BUILD" "$BUILD/bloomd" >/dev/null

is "$(grep -oE '^(core|packet|io|service)/ ' "$here/daemon/README" | tr -d '/ ' | tr '\n' ' ')" "core packet io service " \
	"daemon/README names the four layers' folders, in order"
strays=$(cd "$here/daemon" && ls | grep -vxE 'README|core|packet|io|service')
is "$strays" "" "every file of daemon/ is in a layer's folder"
# The rest of the tree by role: what is installed beside bloomd in programs/, make bench's in
# bench/, what the tests share in tests/support/.
misplaced=$(cd "$here" && { ls tests | grep -vE '\.t$|^(unit|fuzz|fresh|replay|suricata|support)$'; ls tools | grep -E '^bench|^bloomctl|^bloomd-fetch|^cli\.|^ctlconn\.|^synth\.'; })
is "$misplaced" "" "tests/ holds the tests and their folders alone; tools/ no bench, installed program or test support"
upward=$(python3 - "$here" <<'PY'
import os, re, sys
root = sys.argv[1]
order = ["core", "packet", "io", "service"]
def files(layer):  # the layer's files, with the folder they are in (io's subsystems)
    for d, _, names in sorted(os.walk(os.path.join(root, "daemon", layer))):
        for f in sorted(names):
            yield os.path.relpath(os.path.join(d, f), os.path.join(root, "daemon", layer)), f
layer_of = {}
for layer in order:
    for _, f in files(layer):
        layer_of[f.rsplit(".", 1)[0]] = layer
for layer in order:
    for path, f in files(layer):
        for n, line in enumerate(open(os.path.join(root, "daemon", layer, path)), 1):
            m = re.match(r'#include "([a-z_0-9]+)\.h"', line)
            if not m:
                continue
            inc = m.group(1)
            if inc in layer_of and order.index(layer_of[inc]) > order.index(layer):
                print(f"daemon/{layer}/{path}:{n}: {layer} includes {inc}.h of {layer_of[inc]}")
            if f.rsplit(".", 1)[0] in ("engine", "alert", "events", "workers", "frame") and inc == "matcher":
                print(f"daemon/{layer}/{path}:{n}: the packet path includes matcher.h, the builder: matcher_view.h")
PY
)
is "$upward" "" "no file includes from a layer above its own; the packet path includes the matcher's view"

# The build's own flags for a layer's files; a sanitizer build's libraries link with its runtime.
flags() { MAKEFLAGS= MAKELEVEL= make -s -C "$here" BUILD="$BUILD" "layer-flags-$1"; }
san=()
nm "$BUILD/libbloomcore.a" 2>/dev/null | grep -q __asan_ && san+=(-fsanitize=address)
nm "$BUILD/libbloomcore.a" 2>/dev/null | grep -q __ubsan_ && san+=(-fsanitize=undefined)
printf '#include "service.h"\n' > "$tmp/probe.c"
out=$(cc -std=c11 $(flags core) -fsyntax-only "$tmp/probe.c" 2>&1)
[ $? -ne 0 ] && grep -q "service.h" <<<"$out"; ok $? "a core file that includes service.h does not compile"
printf 'void service_propagate(void *s);\nint probe(void) { service_propagate(0); return 0; }\nint main(void) { return probe(); }\n' > "$tmp/call.c"
out=$(cc -std=c11 "${san[@]}" $(flags core) "$tmp/call.c" "$BUILD/libbloomcore.a" -lxxhash -lm -o "$tmp/call" 2>&1)
[ $? -ne 0 ] && grep -q "undefined reference to .service_propagate" <<<"$out"; ok $? "and a call from it into the service does not link"

# Each layer's library whole, with the layers below it and its allowed libraries alone.
printf 'int main(void) { return 0; }\n' > "$tmp/main.c"
whole() { # whole NAME LIBS...: link every object of the named layers' libraries, and the rest
	local libs=() l
	for l in $1; do libs+=("$BUILD/libbloom$l.a"); done
	shift
	cc "${san[@]}" "$tmp/main.c" -Wl,--whole-archive "${libs[@]}" -Wl,--no-whole-archive "$@" -lm -pthread -o "$tmp/whole" 2>&1 |
		grep -o "undefined reference to [^ ]*" | sort -u | head -5
}
is "$(whole core -lxxhash)" "" "libbloomcore.a links alone (xxHash)"
is "$(whole "packet core" -lxxhash -ljansson -lnettle)" "" "libbloompacket.a links with the core alone (no libpcap, libevent, hiredis)"
io_libs="$BUILD/libhiredis.a $(pkg-config --libs libxxhash jansson nettle libpcap libevent_core openssl libnetfilter_queue libnftables libmnl liburcu-qsbr inih libsystemd libcap libbpf 2>/dev/null)"
is "$(whole "io packet core" $io_libs)" "" "libbloomio.a links with the packet layer and the core, no service"

# Which file's object uses which file's symbols; a circle among them is a family that is not a tree.
circles=$(SRC="$here" python3 - "$BUILD/daemon" <<'PY'
import glob, os, subprocess, sys
d = sys.argv[1]
src = os.environ["SRC"]  # an object whose source is gone (renamed since it was built) is left out
objs = sorted(os.path.relpath(o, d) for l in ("core", "packet", "io", "service")
              for o in glob.glob(os.path.join(d, l, "**", "*.o"), recursive=True)
              if os.path.exists(os.path.join(src, "daemon", os.path.relpath(o, d)[:-2] + ".c")))
if not objs:
    print("SKIP")
    sys.exit()
defined, used = {}, {}
for o in objs:
    name = os.path.basename(o)[:-2]
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
is "$circles" "" "no files of daemon/ call each other round a circle"

# io/: a folder per subsystem, the ones daemon/README names; a subsystem calls its own files,
# sys/'s and the lower layers' alone, but for the calls daemon/README lists with their reasons.
is "$(cd "$here/daemon/io" && ls -p | tr '\n' ' ')" "$(sed -n 's|^  \([a-z]*/\)  .*|\1|p' "$here/daemon/README" | sort | tr '\n' ' ')" \
	"io/ holds its subsystems' folders alone, each named in daemon/README"
crossing=$(SRC="$here" python3 - "$BUILD/daemon/io" "$here/daemon/README" <<'PY'
import fnmatch, glob, os, re, subprocess, sys
d, readme = sys.argv[1], sys.argv[2]
allowed = re.findall(r"^  ([a-z]+) -> ([a-z]+): ([a-z_*]+) ", open(readme).read(), re.M)
defined, uses = {}, {}
for o in glob.glob(os.path.join(d, "*", "*.o")):
    if not os.path.exists(os.path.join(os.environ["SRC"], "daemon", "io", os.path.relpath(o, d)[:-2] + ".c")):
        continue  # built before a rename: its source is gone
    sub, name = o.split(os.sep)[-2], os.path.basename(o)[:-2]
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDRB":
            defined[f[2]] = sub
        elif len(f) == 2 and f[0] == "U":
            uses.setdefault((sub, name), set()).add(f[1])
for (sub, name), syms in sorted(uses.items()):
    for sym in sorted(syms):
        to = defined.get(sym)
        if to in (None, sub, "sys") or any((a, b) == (sub, to) and fnmatch.fnmatch(sym, pat) for a, b, pat in allowed):
            continue
        print(f"io/{sub}/{name}.c calls {sym} of io/{to}/")
PY
)
is "$crossing" "" "each io subsystem calls its own, sys/'s and lower layers' functions, but for daemon/README's list"
# A function a header exports is called from another file (the tests, benches and programs count):
# one that is not is dead, or belongs to its file alone (static).
unused=$(python3 - "$here" "$BUILD" <<'PY'
import glob, os, re, subprocess, sys
here, build = sys.argv[1], sys.argv[2]
objs = [o for o in glob.glob(os.path.join(build, "**", "*.o"), recursive=True) if "/third_party/" not in o and "/bpf/" not in o
        and ("/daemon/" not in o or os.path.exists(os.path.join(here, os.path.relpath(o, build)[:-2] + ".c")))]
defined, users = {}, {}
for o in objs:
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "T":
            defined.setdefault(f[2], set()).add(o)
        elif len(f) == 2 and f[0] == "U":
            users.setdefault(f[1], set()).add(o)
outside = ""
for pattern in ("tests/**/*.c", "bench/*.c", "programs/*.c"):
    for f in glob.glob(os.path.join(here, pattern), recursive=True):
        outside += open(f, errors="replace").read()
named = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", outside))
for sym, where in sorted(defined.items()):
    if sym == "main" or not any("/daemon/" in o for o in where):
        continue
    if not (users.get(sym, set()) - where) and sym not in named:
        print(f"{sym} ({os.path.relpath(sorted(where)[0], build)})")
PY
)
is "$unused" "" "every function a daemon header exports is called from another file"
# The entry set's one owner: what matcher.h declares (what changes which entries the matcher holds,
# and how it is built) is called from service/lists.c alone, and included by it alone, but for
# daemon/README's list; the matcher's own files aside.
owners=$(SRC="$here" python3 - "$BUILD/daemon" "$here/daemon/README" "$here/daemon/packet/matcher.h" <<'PY'
import fnmatch, glob, os, re, subprocess, sys
d, readme, header = sys.argv[1], sys.argv[2], sys.argv[3]
changes = set(re.findall(r"\b(matcher?_[a-z_]+)\(", open(header).read()))
allowed = {"service/lists": ["*"]}
for rel, pat in re.findall(r"^  ([a-z_/]+)\.c: (match[a-z_*]+)\s{2,}", open(readme).read(), re.M):
    allowed.setdefault(rel, []).append(pat)
for o in sorted(glob.glob(os.path.join(d, "**", "*.o"), recursive=True)):
    rel = os.path.relpath(o, d)[:-2]
    src = os.path.join(os.environ["SRC"], "daemon", rel + ".c")
    if not os.path.exists(src) or re.fullmatch(r"packet/matcher(_[a-z]+)?", rel):
        continue
    ok = allowed.get(rel, [])
    for line in subprocess.run(["nm", "-u", o], capture_output=True, text=True).stdout.splitlines():
        sym = line.split()[-1]
        if sym in changes and not any(fnmatch.fnmatch(sym, p) for p in ok):
            print(f"daemon/{rel}.c calls {sym}: the entry set's changes are lists.c's (lists.h names them)")
    if not ok and '#include "matcher.h"' in open(src).read():
        print(f"daemon/{rel}.c includes matcher.h: matcher_view.h reads the matcher, matcher_copy.h follows it")
PY
)
is "$owners" "" "the entry set has one owner: matcher.h's changes are called and included by lists.c alone, but for daemon/README's list"
# Writable statics (.data, .bss) of the daemon's objects, but for daemon/README's list.
statics=$(SRC="$here" python3 - "$BUILD/daemon" "$here/daemon/README" <<'PY'
import glob, os, re, subprocess, sys
d, readme = sys.argv[1], sys.argv[2]
allowed = set()
for line in open(readme):
    m = re.match(r"  ([a-z]+/[a-z_]+)\.c: ([a-z_, ]+?)\s{2,}", line)
    if m:
        allowed |= {(m.group(1), v.strip()) for v in m.group(2).split(",")}
for o in sorted(glob.glob(os.path.join(d, "**", "*.o"), recursive=True)):
    rel = os.path.relpath(o, d)[:-2]
    if not os.path.exists(os.path.join(os.environ["SRC"], "daemon", rel + ".c")):
        continue
    for line in subprocess.run(["objdump", "-t", o], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) < 5 or f[1] != "l" or not re.fullmatch(r"\.(data|bss)(\.rel\.local)?(\..*)?", f[-3]) or "rel.ro" in f[-3]:
            continue
        name = f[-1].split(".")[0]  # a function's static is NAME.N
        if name and (rel[3:] if rel.startswith("io/") else rel, name) not in allowed:
            print(f"daemon/{rel}.c: {name}")
PY
)
is "$statics" "" "no daemon file keeps writable state in a static, but for daemon/README's list"
untold=$(for h in "$here"/daemon/*/*.h "$here"/daemon/io/*/*.h; do b=$(basename "$h"); head -n 1 "$h" | grep -q "^/\* $b - ..* \*/\$" || echo "$b"; done)
is "$untold" "" "every header's first line says what it is (/* name.h - ... */)"
strangers=$(cd "$here/daemon" && for h in */*_internal.h io/*/*_internal.h; do
	family=$(basename "${h%_internal.h}")
	grep -l "#include \"$(basename "$h")\"" */*.c */*.h io/*/*.[ch] | grep -v -e "/$family\.[ch]\$" -e "/${family}_[a-z_]*\.[ch]\$" | sed "s|\$| includes $h|"
done)
is "$strangers" "" "a family's *_internal.h is included by that family's files alone"
long=$(wc -l "$here"/daemon/*/*.c "$here"/daemon/io/*/*.c | awk '$2 != "total" && $1 >= 1000 { sub(".*/daemon/", "", $2); print $2 " " $1 }')
is "$long" "" "every daemon source is under 1,000 lines"

# struct service: a few things every service file reads, and parts each touched by its owners.
parts=$(python3 - "$here/daemon/service" <<'PY'
import os, re, sys
d = sys.argv[1]
internal = open(os.path.join(d, "service_internal.h")).read()
body = internal[internal.index("struct service {"):]
body = body[body.index("{") + 1:body.index("\n};")]
members = [l for l in body.splitlines() if l.strip() and not l.strip().startswith("/*")]
print(f"members {len(members)}")
member_of = dict(re.findall(r"struct (service_\w+) (\w+);", body))
owners = {}
for h in sorted(os.listdir(d)):
    if h.endswith(".h"):
        for files, part in re.findall(r"Owned by: ([\w. ]+?) \*/\s*\nstruct (service_\w+) \{", open(os.path.join(d, h)).read()):
            owners[member_of[part]] = files.split()
print(f"parts {len(owners)} of {len(member_of)}")
for f in sorted(os.listdir(d)):
    if not f.endswith(".c"):
        continue
    for n, line in enumerate(open(os.path.join(d, f)), 1):
        for m in re.finditer(r"(?<![\w>.])(?:\w+->)?s->(\w+)\b", line):
            if m.group(1) in owners and f not in owners[m.group(1)]:
                print(f"daemon/service/{f}:{n}: touches s->{m.group(1)}, which {' '.join(owners[m.group(1)])} own")
PY
)
n=$(sed -n 's/^members //p' <<<"$parts")
[ "${n:-99}" -le 15 ]; ok $? "struct service has 15 members at most ($n)"
is "$(grep -v '^members \|^parts ' <<<"$parts")" "" "each of its parts is touched by its owners alone ($(grep '^parts ' <<<"$parts"): declared with them)"
done_testing
