/* state_dir.h - the one way bloomd opens, makes, renames and syncs files in its state directory. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_DIR_H
#define BLOOMD_STATE_DIR_H

/*
 * Every reader and writer of the state directory (the snapshot, the
 * journal, lists/, fetch/, revs/, the cluster's cursor and outbox) goes through here, so
 * none of them opens a state path by name:
 *
 *   - the directory is opened once, at start, and every file is reached
 *     relative to that descriptor, one component at a time, each with
 *     O_NOFOLLOW: a link anywhere below the directory (STATE/lists swapped
 *     for a link, or STATE/lists/NAME) is refused, never followed;
 *   - a file is opened O_NONBLOCK and fstat'd before use: anything but a
 *     regular file (a FIFO, a device, a socket) is refused at once instead
 *     of hanging the start, and a directory where one is expected;
 *   - a file or directory must belong to root, to the user bloomd runs as,
 *     or to the directory's owner: one planted by anyone else is refused;
 *   - new files are made afresh (whatever was at the name is unlinked, the
 *     name created O_EXCL), mode 0600; sub-directories 0700.
 *
 * A root start with [service] user hands the directory and what bloomd made
 * in it to that user before the switch (state_dir_give), and anything made
 * after the hand-over while still root is given too, so nothing is left that
 * the service user cannot replace. Only what bloomd made is given: a
 * directory, or a file with one name only, of root's, bloomd's or that
 * user's; a hard link to another user's file (which the service user could
 * have planted) keeps its owner.
 *
 * Paths here are relative: "journal" or "lists/NAME" (one sub-directory at
 * most, no "." or ".." component). Errors come back as -1 with errno
 * (state_dir_strerror says the refusals plainly); nothing here prints.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct state_dir {
	int fd;             /* the directory, opened once; -1 when there is no state */
	char path[4096];    /* its name, for messages */
	uid_t dir_owner;    /* who owned it when opened, or was given it */
	bool give;          /* root start with [service] user: new files go to owner:group */
	uid_t owner;
	gid_t group;
};

/*
 * Open path as the state directory (made 0750 if missing). The directory's
 * own path is the operator's and is followed; a directory anyone may write
 * to is refused. -1 with a message.
 */
int state_dir_open(struct state_dir *d, const char *path, char *err, size_t errlen);
void state_dir_close(struct state_dir *d);

/*
 * Give the directory, its files and lists/, fetch/ and revs/ with their files to uid:gid,
 * never through a link; files made from now on while still root are given
 * too. -1 with a message naming the path that could not be given.
 */
int state_dir_give(struct state_dir *d, uid_t uid, gid_t gid, char *err, size_t errlen);

/* Open an existing regular file (flags as open(2); ENOENT: there is none). */
int state_dir_open_file(const struct state_dir *d, const char *rel, int flags);

/*
 * A new, empty file at rel for writing (flags added to O_WRONLY, or O_RDWR if they say so), mode
 * 0600, its sub-directory made if missing: whatever was at the name is
 * unlinked first, so nothing planted there can redirect the write.
 */
int state_dir_create(const struct state_dir *d, const char *rel, int flags);

/* rename(2) of from over to, both in the same directory of the state. */
int state_dir_rename(const struct state_dir *d, const char *from, const char *to);

/* unlink(2) of rel; a missing file is no error. */
int state_dir_unlink(const struct state_dir *d, const char *rel);

/*
 * each(ctx, name) for every entry of the sub-directory sub but . and .. (none when it is
 * missing); each may unlink the entry it is given. -1 with errno.
 */
int state_dir_each(const struct state_dir *d, const char *sub, void (*each)(void *ctx, const char *name), void *ctx);
/* fsync(2) of the directory that holds rel (a rename or a new name in it made durable). */
int state_dir_sync(const struct state_dir *d, const char *rel);

/* "DIR/rel", for messages. */
const char *state_dir_name(const struct state_dir *d, const char *rel, char *out, size_t len);
/* The same for a refusal: "DIR/lists" when rel's sub-directory is what was refused (a link, a file). */
const char *state_dir_culprit(const struct state_dir *d, const char *rel, char *out, size_t len);

/* strerror, with the refusals said plainly (a link, not a regular file, a stranger's file). */
const char *state_dir_strerror(int e);

#endif
