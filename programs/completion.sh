#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# completion.sh - bloomctl's bash completion, written from daemon/service/commands.def (each command,
# its options and what its arguments are) to standard output. The Makefile runs it.
set -euo pipefail
def=${1:-daemon/service/commands.def}
# Each command's bloomctl usage (the fourth field of COMMAND), one a line: "add ENTRY [--ttl TIME]".
usages=$(sed -En 's/^COMMAND\([a-z]+, [a-z]+, "([^"\\]|\\.)*", "(([^"\\]|\\.)*)".*/\2/p' "$def")
[ -n "$usages" ] || { echo "completion.sh: no COMMAND lines in $def" >&2; exit 1; }
commands=$(awk '{ print $1 }' <<<"$usages" | tr '\n' ' ')
cat <<HEAD
# bash completion for bloomctl, written from bloomd's daemon/service/commands.def: do not edit.
# List names come from the running daemon (bloomctl lists), where it answers.

_bloomctl_lists() {
	local sock=\$1
	bloomctl \${sock:+-s "\$sock"} --json lists 2>/dev/null | grep -o '"name": *"[^"]*"' | cut -d'"' -f4
}

_bloomctl() {
	local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD - 1]}
	local i cmd= sock= nargs=0
	for ((i = 1; i < COMP_CWORD; i++)); do
		case \${COMP_WORDS[i]} in
		-s) sock=\${COMP_WORDS[i + 1]}; ((i++)) ;;
		--json) ;;
		*) if [ -z "\$cmd" ]; then cmd=\${COMP_WORDS[i]}; else case \${COMP_WORDS[i]} in -*) ;; *) ((nargs++)) ;; esac; fi ;;
		esac
	done
	COMPREPLY=()
	if [ "\$prev" = -s ]; then
		COMPREPLY=(\$(compgen -f -- "\$cur"))
		return
	fi
	if [ -z "\$cmd" ]; then
		COMPREPLY=(\$(compgen -W "$commands calc -s --json --version" -- "\$cur"))
		return
	fi
	case \$prev in
	--kind) COMPREPLY=(\$(compgen -W "addr net pair sig" -- "\$cur")); return ;;
	--list) COMPREPLY=(\$(compgen -W "\$(_bloomctl_lists "\$sock")" -- "\$cur")); return ;;
	--ttl | --rounds | --entries | --fpr | --bits-per-entry | --memory | --choices) return ;;
	--layout) COMPREPLY=(\$(compgen -W "classic blocked" -- "\$cur")); return ;;
	esac
	case \$cmd in
HEAD
# One case a command: its options, and its first argument by its placeholder.
while read -r name args; do
	opts=$(grep -o -- '--[a-z-]*' <<<"$args" | sort -u | tr '\n' ' ' || true)
	first=$(sed -e 's/\[[^]]*\]//g' <<<"$args" | awk '{ print $1 }')
	case $first in
	ENTRY) words='addr net pair sig'; kind=words ;;
	LIST) words=; kind=lists ;;
	FILE\|- | FILE | PCAP) words=; kind=files ;;
	*\|*) words=${first//|/ }; kind=words ;;
	*) words=; kind=none ;;
	esac
	printf '\t%s)\n' "$name"
	case $kind in
	words) printf '\t\t[ $nargs -eq 0 ] && COMPREPLY=($(compgen -W "%s %s" -- "$cur")) || COMPREPLY=($(compgen -W "%s" -- "$cur")) ;;\n' "$words" "$opts" "$opts" ;;
	lists) printf '\t\t[ $nargs -eq 0 ] && COMPREPLY=($(compgen -W "$(_bloomctl_lists "$sock") %s" -- "$cur")) || COMPREPLY=($(compgen -f -W "%s" -- "$cur")) ;;\n' "$opts" "$opts" ;;
	files) printf '\t\tCOMPREPLY=($(compgen -f -W "%s" -- "$cur")) ;;\n' "$opts" ;;
	none) printf '\t\tCOMPREPLY=($(compgen -W "%s" -- "$cur")) ;;\n' "$opts" ;;
	esac
done <<<"$usages"
cat <<'TAIL'
	calc)
		COMPREPLY=($(compgen -W "--entries --fpr --bits-per-entry --memory --layout --choices --rounds" -- "$cur")) ;;
	esac
}
complete -F _bloomctl bloomctl
TAIL
