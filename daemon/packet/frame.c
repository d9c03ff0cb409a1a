/* frame.c - copies of a batch's frames, past their source's buffer. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "frame.h"

#include <stdlib.h>
#include <string.h>

/* The room a first batch gets; a larger frame makes it larger. */
#define FIRST_BYTES (PACKET_BATCH_MAX * 2048)

const uint8_t *frame_copy(struct frame_copies *fc, const uint8_t *frame, size_t len)
{
	if (fc->bytes == NULL || fc->used + len > fc->size) {
		if (fc->used > 0)
			return NULL; /* the batch is handed on first */
		size_t size = len > FIRST_BYTES ? len : FIRST_BYTES;
		uint8_t *bytes = realloc(fc->bytes, size);
		if (bytes == NULL)
			return NULL;
		fc->bytes = bytes;
		fc->size = size;
	}
	uint8_t *at = fc->bytes + fc->used;
	memcpy(at, frame, len);
	fc->used += len;
	return at;
}

void frame_copies_free(struct frame_copies *fc)
{
	free(fc->bytes);
	*fc = (struct frame_copies){ 0 };
}
