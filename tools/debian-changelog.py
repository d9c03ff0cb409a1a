#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""debian-changelog.py NEWS [VERSION]: debian/changelog written from NEWS, the one changelog.

Each "* X.Y.Z (DATE)" of NEWS is an entry of the native package bloomd, its "- " items
(the changes, then what an upgrade asks) its lines, wrapped to fit Debian's 80 columns.
VERSION, if given, is the newest entry's version instead of NEWS's (a rebuild's own)."""
import re
import sys
import textwrap
from datetime import datetime, timedelta, timezone

# The project publishes no mail address: .invalid (RFC 2606) says so, where a made-up one would mislead.
MAINTAINER = "bloomd authors <maintainers@bloomd.invalid>"


def entries(news):
    entry = None
    for line in open(news, encoding="utf-8"):
        head = re.match(r"^\* (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)", line)
        if head:
            entry = {"version": head.group(1), "date": head.group(2), "items": []}
            yield entry
        elif entry and line.startswith("  Upgrading from"):
            entry["upgrading"] = line.strip() + " "
        elif entry and re.match(r"^  +- ", line):
            entry["items"].append(entry.get("upgrading", "") + line.strip()[2:])
        elif entry and entry["items"] and line.startswith("    ") and line.strip():
            entry["items"][-1] += " " + line.strip()


def main():
    news = sys.argv[1]
    newest = sys.argv[2] if len(sys.argv) > 2 else None
    out = []
    all_entries = list(entries(news))
    # Each entry later than the one before it, as Debian wants: versions of one day an hour apart.
    last = None
    for e in reversed(all_entries):
        when = datetime.strptime(e["date"], "%Y-%m-%d").replace(tzinfo=timezone.utc)
        e["when"] = last + timedelta(hours=1) if last and when <= last else when
        last = e["when"]
    for i, e in enumerate(all_entries):
        version = newest if i == 0 and newest else e["version"]
        out.append("bloomd (%s) unstable; urgency=medium\n" % version)
        for item in e["items"] or ["See NEWS."]:
            out.append("\n".join(textwrap.wrap(item, 76, initial_indent="  * ", subsequent_indent="    ")))
        out.append("\n -- %s  %s\n" % (MAINTAINER, e["when"].strftime("%a, %d %b %Y %H:%M:%S +0000")))
    sys.stdout.write("\n".join(out))


main()
