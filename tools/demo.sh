#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# demo.sh - what `make demo` shows: bloomd replaying a bundled capture against a
# bundled entry list, the events it reports, and its statistics.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)

"$build/pcapgen" -o "$build/demo.pcap" "$root/demo/traffic.spec"
echo "== bloomd -c demo/bloomd.conf -r $build/demo.pcap"
echo "   (list demo-blocklist: demo/entries.list; traffic: demo/traffic.spec, 11 packets)"
echo
out=$("$build/bloomd" -c "$root/demo/bloomd.conf" -r "$build/demo.pcap")
echo "== events (one JSON object per matching packet)"
grep '"event_type":"alert"' <<<"$out" | jq -c 'del(.pcap_filename)'
echo
echo "== statistics"
tail -n 1 <<<"$out" | jq '{packets, matched_packets, parse: (.parse | with_entries(select(.value > 0))),
	kinds: (.kinds | map_values({entries, probes, filter_positives, confirmed})),
	filters}'
echo
echo "== sizing a filter for 1,000,000 entries at a 0.03% false-positive rate"
"$build/bloomctl" calc --entries 1000000 --fpr 0.0003
