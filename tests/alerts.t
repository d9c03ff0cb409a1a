#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The alerting rules shipped for Prometheus (conf/bloomd-alerts.yml): promtool check rules, every
# bloomd metric they read is one bloomd exports, and promtool test rules on series taken from a
# real scrape: a bloomd with one list read and one whose file is gone fires BloomdListRefused for
# that one alone, and nothing else while its counters stand still; its event errors rising, the
# scrape job down and the XDP program detached fire theirs.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 5
command -v promtool >/dev/null || skip_all "no promtool (Debian's prometheus; tools/install-deps.sh test)"
root=$(cd "$(dirname "$0")/.." && pwd)
rules=$root/conf/bloomd-alerts.yml
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock

promtool check rules "$rules" > check.out 2>&1; ok $? "promtool check rules: $(grep -o '[0-9]* rules found' check.out)"
unknown=$(grep -o 'bloomd_[a-z_]*' "$rules" | sort -u | while read -r m; do
	grep -q "\"${m#bloomd_}\"" "$root/daemon/packet/metrics.c" || echo "$m"; done)
is "$unknown" "" "every bloomd metric the rules read is one bloomd exports"

printf '192.0.2.1\n' > good.list
cat > bloomd.conf <<C
[list good]
file = $tmp/good.list
format = plain
[list gone]
file = $tmp/gone.list
format = plain
[control]
socket = $sock
[store]
dir = $tmp/state
C
start; ok $? "bloomd starts with one list's file gone"
C metrics > scrape.txt
stop

# The scrape's series, each held for 20 minutes; then the cases the scrape cannot show.
python3 - "$rules" scrape.txt > tests.yml <<'PY'
import re, sys
rules, scrape = sys.argv[1], sys.argv[2]
wanted = ("bloomd_list_last_load_success", "bloomd_store_writable", "bloomd_event_errors_total")
series = []
for line in open(scrape):
    m = re.match(r"^(bloomd_[a-z_]+)(\{[^}]*\})? (\S+)$", line.strip())
    if m and m.group(1) in wanted:
        value = float(m.group(3))
        series.append((m.group(1) + (m.group(2) or ""), "%gx20" % value, value))
errors = next(v for n, _, v in series if n.startswith("bloomd_event_errors_total"))
print("rule_files:\n  - %s\nevaluation_interval: 1m\ntests:" % rules)
print("  - interval: 1m\n    input_series:")
for name, values, _ in series:
    print("      - series: '%s'\n        values: '%s'" % (name, values))
print("""    alert_rule_test:
      - eval_time: 10m
        alertname: BloomdListRefused
        exp_alerts:
          - exp_labels: {severity: warning, list: gone}
            exp_annotations:
              summary: "list gone: its last version was refused; it enforces the one before (bloomctl lists says why)"
      - eval_time: 10m
        alertname: BloomdStateNotWritable
      - eval_time: 10m
        alertname: BloomdEventErrors""")
print("""  - interval: 1m
    input_series:
      - series: 'bloomd_event_errors_total'
        values: '%g+1x10'
      - series: 'up{job="bloomd", instance="sensor1:9477"}'
        values: '1 0x10'
      - series: 'bloomd_xdp_attached{instance="sensor2:9477"}'
        values: '1 1 0x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: BloomdEventErrors
        exp_alerts:
          - exp_labels: {severity: warning}
            exp_annotations:
              summary: "alerts could not be written (bloomctl stats, event_errors; the log says why)"
      - eval_time: 5m
        alertname: BloomdXdpDetached
        exp_alerts:
          - exp_labels: {severity: critical, instance: "sensor2:9477"}
            exp_annotations:
              summary: "bloomd's XDP program is not on sensor2:9477's interface: listed sources are not dropped in the driver"
      - eval_time: 5m
        alertname: BloomdDown
        exp_alerts:
          - exp_labels: {severity: critical, job: bloomd, instance: "sensor1:9477"}
            exp_annotations:
              summary: "bloomd on sensor1:9477 is not answering its metrics scrape\"""" % errors)
print("""  - interval: 1m
    input_series:
      - series: 'bloomd_set_errors_total'
        values: '0 0 1x10'
      - series: 'bloomd_set_restored_total'
        values: '0 0 0 1x10'
      - series: 'bloomd_capture_dropped_packets_total{interface="eth0"}'
        values: '0 5 10x10'
      - series: 'bloomd_list_fetch_stale{list="fast"}'
        values: '0 1x30'
      - series: 'bloomd_list_fetch_stale_since_timestamp_seconds{list="fast"}'
        values: '0 60x30'
      - series: 'bloomd_list_fetch_refresh_seconds{list="fast"}'
        values: '10x30'
      - series: 'bloomd_list_fetch_stale{list="slow"}'
        values: '0 1x30'
      - series: 'bloomd_list_fetch_stale_since_timestamp_seconds{list="slow"}'
        values: '0 60x30'
      - series: 'bloomd_list_fetch_refresh_seconds{list="slow"}'
        values: '600x30'
    alert_rule_test:
      - eval_time: 3m
        alertname: BloomdSetErrors
        exp_alerts:
          - exp_labels: {severity: critical}
            exp_annotations:
              summary: "nft refused elements of bloomd's table: the kernel may not drop all that is listed (the log quotes nft)"
      - eval_time: 4m
        alertname: BloomdSetRestored
        exp_alerts:
          - exp_labels: {severity: warning}
            exp_annotations:
              summary: "another process changed bloomd's nftables table (a rule, an element, a flush): bloomd put it back"
      - eval_time: 2m
        alertname: BloomdCaptureDrops
        exp_alerts:
          - exp_labels: {severity: warning, interface: eth0}
            exp_annotations:
              summary: "the kernel dropped captured packets on eth0: bloomd did not see them (a larger [capture] buffer, or workers)"
      - eval_time: 5m
        alertname: BloomdListStale
      - eval_time: 7m
        alertname: BloomdListStale
        exp_alerts:
          - exp_labels: {severity: warning, list: fast}
            exp_annotations:
              summary: "list fast: its fetches fail or are refused; it enforces what it had"
      - eval_time: 22m
        alertname: BloomdListStale
        exp_alerts:
          - exp_labels: {severity: warning, list: fast}
            exp_annotations:
              summary: "list fast: its fetches fail or are refused; it enforces what it had"
          - exp_labels: {severity: warning, list: slow}
            exp_annotations:
              summary: "list slow: its fetches fail or are refused; it enforces what it had\"""")
PY
grep -q 'bloomd_list_last_load_success{list="gone"} 0' scrape.txt; ok $? "the scrape says list gone's last load failed"
promtool test rules tests.yml > test.out 2>&1; ok $? "promtool test rules: the scrape's series fire BloomdListRefused for gone alone; rising errors, a down job, a detached XDP program, nft's refusals, a table put back and capture drops fire theirs; a stale list after two refreshes or 5 minutes, whichever is longer"
[ $tap_failed -eq 0 ] || sed 's/^/# /' test.out tests.yml
done_testing
