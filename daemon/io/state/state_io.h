/* state_io.h - what the snapshot and the journal share: byte order, buffers, whole-file I/O. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_IO_H
#define BLOOMD_STATE_IO_H

/* Only state.c (snapshots) and state_journal.c include this. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define SNAPSHOT_MAGIC "BLOOMDSN"
#define JOURNAL_MAGIC "BLOOMDJN"
#define MAGIC_LEN 8
#define FILTER_RECORD (4 + 8 + HASH_SECRET_SIZE)
#define SNAPSHOT_HEADER (MAGIC_LEN + 4 + 8 + 4 + 4 + 2 * FILTER_RECORD + 8)
#define JOURNAL_HEADER (MAGIC_LEN + 4 + 8 + 8)
#define RECORD_FIXED (1 + 1 + 2 + 8)   /* op, kind, key length, expiry */
#define RECORD_MAX_BODY (RECORD_FIXED + ENTRY_MAX_KEY)
#define ENTRY_FIXED_V1 (1 + 1 + 2 + 8) /* kind, group, key length, expiry */
#define ENTRY_FIXED (ENTRY_FIXED_V1 + 2) /* and the signature's window offset */

void state_put_le(uint8_t *p, uint64_t v, int n);
uint64_t state_get_le(const uint8_t *p, int n);

/* A growable byte buffer. */
struct state_buf {
	uint8_t *p;
	size_t len, cap;
};

int state_buf_reserve(struct state_buf *b, size_t more);
/* Append n little-endian bytes of v, or n raw bytes (after a reserve). */
void state_buf_put(struct state_buf *b, uint64_t v, int n);
void state_buf_bytes(struct state_buf *b, const void *p, size_t n);

/* write(2) until all n bytes are written: 0, or -1 with errno. */
int state_write_all(int fd, const uint8_t *p, size_t n);

/* The whole of d's file rel in memory (state_dir_open_file's checks); -1 with errno (ENOENT: no file). */
int state_read_file(const struct state_dir *d, const char *rel, struct state_buf *b);
/* Whether (kind, key) is something entry_parse could have produced. */
bool state_entry_valid(unsigned kind, const uint8_t *key, size_t len);

#endif
