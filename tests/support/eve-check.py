#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""eve-check.py PATH... - every eve event in the files (or under the directories) given,
validated against Suricata's own schema (tests/suricata/eve.schema.json); other lines
(a replay's closing statistics) are left out. A file is an
event file when its first line is a JSON object with an event_type; files whose name
starts with "extended" hold [output] eve = extended events, which the schema refuses by
design, and are left out. Prints each failure as FILE:LINE: why; exits 1 if there was one."""
import json
import os
import sys

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "suricata", "eve.schema.json")


def event_file(path):
    if os.path.basename(path).startswith("extended") or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(65536)
        return first.startswith(b"{") and "event_type" in json.loads(first)
    except (OSError, ValueError):
        return False


def files(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                yield from (os.path.join(root, n) for n in sorted(names))
        else:
            yield a


def main():
    schema = json.load(open(SCHEMA))
    validator = jsonschema.validators.validator_for(schema)(schema)
    failed = 0
    for path in filter(event_file, files(sys.argv[1:])):
        with open(path, encoding="utf-8", errors="strict") as f:
            for n, line in enumerate(f, 1):
                record = json.loads(line) if line.strip() else {}
                if "event_type" not in record:  # a replay's closing statistics, not an event
                    continue
                error = jsonschema.exceptions.best_match(validator.iter_errors(record))
                if error is not None:
                    failed += 1
                    if failed <= 5:
                        where = "/".join(str(p) for p in error.absolute_path)
                        print(f"# {path}:{n}: Suricata's eve schema refuses it at '{where}': {error.message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
