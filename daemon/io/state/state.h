/* state.h - durable state: snapshot files and the journal of changes since. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_H
#define BLOOMD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "entry.h"
#include "filter.h"
#include "hash.h"
#include "state_dir.h"

/*
 * The state directory (state_dir.h opens every file in it) holds:
 *
 *   snapshot   "BLOOMDSN", format version, generation, signature window and
 *              hash algorithm, then per filter (addresses, signatures) its
 *              parameters and hash secret; the entries, each with the group
 *              it is counted in, its expiry and (a signature) its window's
 *              offset; an XXH3-64 checksum of all
 *              that. Written to snapshot.tmp, fsync, renamed, directory
 *              fsync'd: a crash leaves the old snapshot or the new one.
 *   journal    "BLOOMDJN", format version, the generation of the snapshot it
 *              follows, a checksum; then one record per add or delete:
 *              length, body, XXH3-64 of both.
 *   journal.tmp the journal of the snapshot being written (generation + 1):
 *              from the moment that snapshot's contents are fixed, changes
 *              go here, and it is renamed over the journal once the
 *              snapshot is in.
 *
 * At start the snapshot is read and the journal replayed over it. A journal
 * older than the snapshot is left over from a crash during a save: its
 * changes are in the snapshot already, so it is ignored, and journal.tmp of
 * the snapshot's generation is the journal. A journal.tmp one generation
 * past the snapshot is left over from a crash while it was written: it is
 * replayed after the journal. A record replayed over a snapshot that
 * holds it already leaves the state as the record says, so the order is
 * all that matters. A torn last record
 * (a crash during an append) is dropped and cut off. Anything else that does
 * not check out (magic, version, checksum, a record in the middle) is an
 * error naming the file and offset, and the file is left as it is.
 *
 *   lists/NAME the last version taken of each list: see below.
 *
 * All integers little-endian. Nothing here prints; errors come back in err.
 */

/*
 * The snapshot's format: 2 since each signature carries the offset of the
 * window it is indexed by (1, read still, did not); the journal's is 1.
 */
#define STATE_VERSION 2
#define STATE_JOURNAL_VERSION 1

struct state_filter {
	bool present;               /* the filter existed (had keys) when saved */
	struct filter_params params;
	struct hash_key key;
};

struct state_header {
	unsigned version;                /* read: the snapshot's format (written: STATE_VERSION) */
	uint64_t generation;
	unsigned window;
	enum hash_algo algo;
	struct state_filter filter[2]; /* addresses, signatures */
	uint64_t entries;
};

enum state_op {
	STATE_ADD = 1,
	STATE_DEL = 2,
};

/* ---- snapshot ---- */

struct state_snapshot_writer;

/* Start snapshot.tmp in d with header h (h->entries is filled in at commit). */
struct state_snapshot_writer *state_snapshot_begin(const struct state_dir *d, const struct state_header *h, char *err,
				       size_t errlen);
/* One entry, counted in group, expiring at expiry (Unix seconds; 0: never), a signature indexed by its window at offset window. */
int state_snapshot_put(struct state_snapshot_writer *w, const struct entry *e, unsigned group, unsigned window,
		 uint64_t expiry);
/* Checksum, fsync, rename over dir/snapshot, fsync dir. Frees w either way. */
int state_snapshot_commit(struct state_snapshot_writer *w, char *err, size_t errlen);
/* Drop an unfinished snapshot (removes the temporary file). */
void state_snapshot_abort(struct state_snapshot_writer *w);

/* window: as saved, or MATCHER_WINDOW_ANY's value (0xffff) from a version 1 snapshot, which did not say. */
#define STATE_WINDOW_UNKNOWN 0xffffu
typedef int (*state_entry_cb)(void *ctx, const struct entry *e, unsigned group, unsigned window,
				uint64_t expiry);

/*
 * Read d's snapshot: check it whole (magic, version, checksum, every
 * entry's syntax), then fill *h and call cb for each entry. Returns 0, 1 if
 * there is no snapshot (*h zeroed), -1 with a message.
 */
int state_snapshot_read(const struct state_dir *d, struct state_header *h, state_entry_cb cb, void *ctx,
		  char *err, size_t errlen);

/* The checksum a snapshot file of len bytes should end with (its last 8 bytes, little-endian). */
uint64_t state_snapshot_checksum(const uint8_t *file, size_t len);

/* ---- journal ---- */

struct state_journal;

typedef int (*state_journal_record_cb)(void *ctx, enum state_op op, const struct entry *e,
				 uint64_t expiry);

/* What state_journal_open found beside the records it replayed. */
struct state_journal_recovery {
	bool missing;          /* no journal although gen > 0: the changes since the snapshot, if any, are gone */
	size_t torn_bytes;     /* the bytes of a torn last record (a crash while writing it), cut off */
	const char *torn_file; /* the file they were cut from: "journal" or "journal.tmp" */
	bool unfinished_save;  /* journal.tmp was replayed too: a snapshot must be written (it is diverted) */
	bool read_only;        /* refused because the file system is read-only (EROFS): the journal is as it was */
};

/*
 * Open d's journal to append after the snapshot of generation gen, replaying
 * its records through cb first. A missing or older journal is replaced by an
 * empty one. Recovery is strict: only a torn last record at the end of the
 * file is cut off (said in *how); any other damage (a bad length, checksum
 * or record anywhere else, or a length that runs past the end with a whole
 * record after it) is an error naming the offset, and the file is left as it
 * is. NULL with a message on error (cb's error included).
 */
struct state_journal *state_journal_open(const struct state_dir *d, uint64_t gen, state_journal_record_cb cb, void *ctx,
			     struct state_journal_recovery *how, char *err, size_t errlen);
void state_journal_close(struct state_journal *j);

/* Queue a record (in memory until state_journal_flush). */
int state_journal_append(struct state_journal *j, enum state_op op, const struct entry *e, uint64_t expiry);

/* Write the queued records; with sync, fsync the file too. */
int state_journal_flush(struct state_journal *j, bool sync, char *err, size_t errlen);

/*
 * Restarting the journal around a snapshot of generation gen, in steps so
 * that a crash between any two leaves a state the next start reads whole:
 *   prepare  writes and fsyncs journal.tmp for gen;
 *   divert   (when the snapshot's contents are fixed) appends there from
 *            then on, the queue included: the old journal stays until
 *            the switch, and while it does, the snapshot may fail and be
 *            written again;
 *   switch   (once the snapshot is committed) renames journal.tmp over the
 *            journal and fsyncs the directory. A journal broken before the
 *            divert is mended; one broken since, not.
 */
int state_journal_prepare(struct state_journal *j, uint64_t gen, char *err, size_t errlen);
int state_journal_divert(struct state_journal *j, char *err, size_t errlen);
int state_journal_switch(struct state_journal *j, char *err, size_t errlen);
/* Between divert and switch (or since a start that found an unfinished save). */
bool state_journal_diverted(const struct state_journal *j);

/* Records and bytes in the journal file (written or queued), and whether any is not yet fsync'd. */
uint64_t state_journal_records(const struct state_journal *j);
uint64_t state_journal_bytes(const struct state_journal *j);
bool state_journal_unsynced(const struct state_journal *j);

/*
 * Whether an fsync of the journal failed: the kernel may have dropped what it
 * held, so it takes no more records until a snapshot and a fresh journal
 * (state_journal_prepare and state_journal_switch) replace it. A failed write alone
 * does not break it: the file is cut back to its whole records, the queue
 * kept, and the next state_journal_flush writes it again.
 */
bool state_journal_broken(const struct state_journal *j);

/* ---- lists' last versions ---- */

/*
 * lists/NAME holds the last version taken of a list, as entry lines between
 * a header line and a checksum line (the XXH3-64 of all before it): at start,
 * a list whose file cannot be read or is refused starts from it, and a list
 * without a file (filled by bloomctl replace) is read from it. Written whole
 * before the version is taken: a temporary file, fsync, rename, directory
 * fsync. -1 with a message if it could not be kept (the caller refuses the
 * version).
 */
int state_list_save(const struct state_dir *d, const char *name, const char *text, size_t len, char *err,
		      size_t errlen);

/*
 * state_list_save a part at a time, for a version too large to write in
 * one go: begin, write the entry lines in as many parts as suit, then end
 * (checksum, fsync, rename, directory fsync) or abandon (the temporary file
 * removed; the kept version stays). Each -1 or NULL with a message naming
 * the file; end and abandon free the writer, and a failed write leaves it
 * to be abandoned.
 */
struct state_list_writer;
struct state_list_writer *state_list_begin(const struct state_dir *d, const char *name, char *err, size_t errlen);
int state_list_write(struct state_list_writer *w, const char *text, size_t len, char *err, size_t errlen);
int state_list_end(struct state_list_writer *w, char *err, size_t errlen);
void state_list_abandon(struct state_list_writer *w);

struct state_list {
	char *text;      /* the whole file, the checksum line left out, NUL-terminated; the caller frees */
	size_t len;
	bool unchecked;  /* written by 0.7 or before, without a checksum */
};

/*
 * The kept version of list name, checked whole: 0, 1 if there is none, -1
 * with a message naming the file if it cannot be read or is damaged (a
 * bad header, a checksum that does not match: nothing of it is taken).
 */
int state_list_read(const struct state_dir *d, const char *name, struct state_list *out, char *err,
		      size_t errlen);

#endif
