/* Fuzz harness: packet_parse on any link type, then the matcher on what it parsed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "matcher.h"
#include "packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int LINKS[] = { 0, 1, 12, 101, 108, 113, 228, 229, 276 };

static struct matcher *make_matcher(void)
{
	static const char *const lines[] = {
		"addr 10.0.0.1", "addr ::1", "net 10.0.0.0/8", "net 2001:db8::/32",
		"pair 10.0.0.1 10.0.0.2", "sig \"GET /etc\"", "sig hex:0000000000000000",
		"sig \"AAAAAAAABBBB\"",
	};
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .memory = 256, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct entry e;

	for (size_t i = 0; m && i < sizeof(lines) / sizeof(lines[0]); i++)
		if (entry_parse(lines[i], &e, NULL, 0) == 1)
			matcher_add(m, &e, NULL, 0);
	if (m)
		matcher_build(m, NULL, 0);
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct matcher *m;
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct packet_view v;

	if (size < 1)
		return 0;
	if (m == NULL)
		m = make_matcher();
	/* An exact-size copy, so any read past the frame is caught. */
	uint8_t *frame = malloc(size - 1 ? size - 1 : 1);
	memcpy(frame, data + 1, size - 1);
	packet_parse(LINKS[data[0] % (sizeof(LINKS) / sizeof(LINKS[0]))], frame, size - 1, size - 1 + data[0] / 16, &v);
	if (m)
		matcher_check(m, &v, hits, MATCHER_MAX_HITS);
	free(frame);
	return 0;
}
