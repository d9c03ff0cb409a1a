#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The licence: LICENSE at the root (BSD-2-Clause, the bloomd authors); an SPDX-License-Identifier
# line in the first lines of every source, header, script, unit and build file (third_party/
# keeps its own licences; documentation and data files carry none); each BPF program's licence
# string agrees with its SPDX line. The check is shown to fail on a file without one.
. "$(dirname "$0")/support/tap.sh"
plan 6
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || exit 1

# The files that need a line: what git tracks (or, outside a clone, what is here), less
# third_party/ and the documentation and data files.
tracked() {
	{ git ls-files 2>/dev/null || find . -type f ! -path './.git/*' ! -path './build*' | sed 's|^\./||'; } |
		grep -Ev '^third_party/|^debian/(changelog|copyright|clean|source/format|.*\.(lintian-overrides|docs|examples|manpages|links|dirs|install|conffiles))$|\.(md|[158]|json|list|spec|txt|gitignore)$|(^|/)(README|NEWS|LICENSE|cases)$'
}
# The files of $@ without an SPDX-License-Identifier line in their first four lines.
unlicensed() { for f in "$@"; do head -n 4 "$f" | grep -q 'SPDX-License-Identifier: [A-Za-z0-9.+-]' || echo "$f"; done; }

grep -q "^BSD 2-Clause License" LICENSE && grep -q "^Copyright (c) 2026, the bloomd authors" LICENSE
ok $? "LICENSE: BSD 2-Clause, the bloomd authors"
mapfile -t files < <(tracked)
missing=$(unlicensed "${files[@]}")
is "$missing" "" "every one of ${#files[@]} source, header, script, unit and build files has an SPDX line"
printf '/* a file someone forgot */\nint x;\n' > "$tmp/forgot.c"
is "$(unlicensed "$tmp/forgot.c")" "$tmp/forgot.c" "the check finds a file without one"

# A BPF program's licence string is the kernel's word for its SPDX line's licence.
spdx_of_string() {
	case $1 in
	GPL) echo "GPL-2.0-only" ;;
	"Dual BSD/GPL") echo "GPL-2.0-only OR BSD-2-Clause" ;;
	*) echo "unknown licence string '$1'" ;;
	esac
}
disagree() { # the BPF programs of $@ whose licence string and SPDX line disagree
	local f string spdx
	for f in "$@"; do
		string=$(sed -n 's/.*SEC("license") = "\([^"]*\)".*/\1/p' "$f")
		spdx=$(head -n 4 "$f" | sed -n 's|.*SPDX-License-Identifier: \([^*]*[^ *]\).*|\1|p')
		[ "$(spdx_of_string "$string")" = "$spdx" ] || echo "$f ('$string' against '$spdx')"
	done
}
bpf=(bpf/*.bpf.c)
is "$(disagree "${bpf[@]}")" "" "each of ${#bpf[@]} BPF programs: its licence string and SPDX line agree (Dual BSD/GPL)"
sed 's/"Dual BSD\/GPL"/"GPL"/' bpf/xdp_drop.bpf.c > "$tmp/xdp_gpl.bpf.c"
disagree "$tmp/xdp_gpl.bpf.c" | grep -q "'GPL' against 'GPL-2.0-only OR BSD-2-Clause'"
ok $? "the check finds a program whose string and line disagree"
is "$(grep -h 'SPDX-License-Identifier' bpf/* | sed 's|.*SPDX-License-Identifier: \([^*]*[^ *]\).*|\1|' | sort -u)" "GPL-2.0-only OR BSD-2-Clause" \
	"bpf/ is GPL-2.0-only OR BSD-2-Clause throughout"
