/* Fuzz harness: entry_parse on any line; what parses must print and parse back to the same key. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct entry e, again;
	static char text[ENTRY_TEXT_MAX + 8], value[ENTRY_TEXT_MAX];
	char *line = malloc(size + 1);

	memcpy(line, data, size);
	line[size] = '\0';
	if (entry_parse(line, &e, NULL, 0) == 1) {
		entry_format_value(e.kind, e.key, e.len, value, sizeof(value));
		strcpy(text, entry_kind_name(e.kind));
		strcat(text, " ");
		strcat(text, value);
		if (entry_parse(text, &again, NULL, 0) != 1 || again.kind != e.kind ||
		    again.len != e.len || memcmp(again.key, e.key, e.len) != 0)
			abort(); /* the canonical form must mean the same entry */
	}
	free(line);
	return 0;
}
