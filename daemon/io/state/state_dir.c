/* state_dir.c - the one way bloomd opens, makes, renames and syncs files in its state directory. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "state_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define SUBDIR_MAX 64

int state_dir_open(struct state_dir *d, const char *path, char *err, size_t errlen)
{
	struct stat st;

	*d = (struct state_dir){ .fd = -1 };
	snprintf(d->path, sizeof(d->path), "%s", path);
	if (mkdir(path, 0750) < 0 && errno != EEXIST) {
		error_set(err, errlen, "[store] dir %s: %s", path, strerror(errno));
		return -1;
	}
	if ((d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(d->fd, &st) < 0) {
		error_set(err, errlen, "[store] dir %s: %s", path, strerror(errno));
		state_dir_close(d);
		return -1;
	}
	/* Anyone could plant files in it for bloomd (perhaps root) to read or replace. */
	if (st.st_mode & S_IWOTH) {
		error_set(err, errlen, "[store] dir %s is writable by every user: refused (chmod o-w %s)", path, path);
		state_dir_close(d);
		return -1;
	}
	d->dir_owner = st.st_uid;
	return 0;
}

void state_dir_close(struct state_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

static bool owner_ok(const struct state_dir *d, uid_t uid)
{
	return uid == 0 || uid == geteuid() || uid == d->dir_owner || (d->give && uid == d->owner);
}

/* fd checked: the type wanted (S_IFREG, S_IFDIR) and a trusted owner; closed and -1 if not. */
static int checked(const struct state_dir *d, int fd, mode_t type)
{
	struct stat st;
	int e;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if ((st.st_mode & S_IFMT) != type)
		e = EINVAL;
	else if (!owner_ok(d, st.st_uid))
		e = EPERM;
	else
		return fd;
	close(fd);
	errno = e;
	return -1;
}

/* A FIFO opened O_WRONLY|O_NONBLOCK with no reader fails ENXIO: it is not a regular file either. */
static int open_nofollow(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);

	if (fd < 0 && (errno == ENXIO || errno == ENODEV || errno == EOPNOTSUPP))
		errno = EINVAL;
	return fd;
}

/* Hand a file made while root to the service user (state_dir_give). */
static int given(const struct state_dir *d, int fd)
{
	if (fd >= 0 && d->give && geteuid() == 0 && fchown(fd, d->owner, d->group) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * The directory that holds rel (the state directory itself, or a
 * sub-directory opened without following a link; made if make), and rel's
 * last component in *leaf. The caller closes what is returned unless it is
 * d->fd. -1 with errno.
 */
static int parent_of(const struct state_dir *d, const char *rel, bool make, const char **leaf)
{
	const char *slash = strchr(rel, '/');
	char sub[SUBDIR_MAX];

	if (d->fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (slash == NULL) {
		*leaf = rel;
		return d->fd;
	}
	*leaf = slash + 1;
	size_t n = (size_t)(slash - rel);
	if (n == 0 || n >= sizeof(sub) || strchr(*leaf, '/') || **leaf == '\0') {
		errno = EINVAL;
		return -1;
	}
	memcpy(sub, rel, n);
	sub[n] = '\0';
	if (strcmp(sub, ".") == 0 || strcmp(sub, "..") == 0) {
		errno = EINVAL;
		return -1;
	}
	int fd = openat(d->fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make) {
		if (mkdirat(d->fd, sub, 0700) < 0 && errno != EEXIST)
			return -1;
		fd = given(d, openat(d->fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	}
	if (fd < 0 && errno == ENOTDIR) { /* a link (O_NOFOLLOW) or a file where the directory should be */
		struct stat st;
		errno = fstatat(d->fd, sub, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) ? ELOOP : EINVAL;
	}
	return checked(d, fd, S_IFDIR);
}

static void close_parent(const struct state_dir *d, int dirfd)
{
	if (dirfd >= 0 && dirfd != d->fd) {
		int e = errno;
		close(dirfd);
		errno = e;
	}
}

static bool leaf_ok(const char *leaf)
{
	return strcmp(leaf, ".") != 0 && strcmp(leaf, "..") != 0;
}

/* fd (opened O_NONBLOCK, so that a FIFO could not hang the open) made blocking for its reads and writes; -1 with errno. */
static int blocking(int fd)
{
	int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
		return fd;
	if (fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return -1;
}

int state_dir_open_file(const struct state_dir *d, const char *rel, int flags)
{
	const char *leaf;
	int dirfd = parent_of(d, rel, false, &leaf), fd = -1;

	if (dirfd < 0)
		return -1;
	if (!leaf_ok(leaf))
		errno = EINVAL;
	else
		fd = blocking(checked(d, open_nofollow(dirfd, leaf, flags, 0), S_IFREG));
	close_parent(d, dirfd);
	return fd;
}

int state_dir_create(const struct state_dir *d, const char *rel, int flags)
{
	int access = (flags & O_ACCMODE) == O_RDWR ? O_RDWR : O_WRONLY;
	const char *leaf;
	int dirfd = parent_of(d, rel, true, &leaf), fd = -1;

	if (dirfd < 0)
		return -1;
	if (!leaf_ok(leaf))
		errno = EINVAL;
	else if (unlinkat(dirfd, leaf, 0) == 0 || errno == ENOENT)
		fd = blocking(given(d, open_nofollow(dirfd, leaf, access | O_CREAT | O_EXCL | (flags & ~O_ACCMODE), 0600)));
	close_parent(d, dirfd);
	return fd;
}

int state_dir_rename(const struct state_dir *d, const char *from, const char *to)
{
	const char *from_leaf, *to_leaf;
	int dirfd = parent_of(d, to, false, &to_leaf), rc = -1;

	if (dirfd < 0)
		return -1;
	/* Both in one directory: the parent of from is the parent of to. */
	if (strncmp(from, to, (size_t)(to_leaf - to)) != 0 || strchr(from + (to_leaf - to), '/') != NULL) {
		errno = EXDEV;
	} else {
		from_leaf = from + (to_leaf - to);
		rc = renameat(dirfd, from_leaf, dirfd, to_leaf);
	}
	close_parent(d, dirfd);
	return rc;
}

int state_dir_unlink(const struct state_dir *d, const char *rel)
{
	const char *leaf;
	int dirfd = parent_of(d, rel, false, &leaf), rc;

	if (dirfd < 0)
		return errno == ENOENT ? 0 : -1;
	rc = unlinkat(dirfd, leaf, 0) < 0 && errno != ENOENT ? -1 : 0;
	close_parent(d, dirfd);
	return rc;
}

int state_dir_each(const struct state_dir *d, const char *sub, void (*each)(void *ctx, const char *name), void *ctx)
{
	char probe[SUBDIR_MAX + 2];
	const char *leaf;
	struct dirent *de;

	if (d->fd < 0)
		return 0;
	snprintf(probe, sizeof(probe), "%s/x", sub);
	int dirfd = parent_of(d, probe, false, &leaf);
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -1;
	DIR *dir = fdopendir(dirfd);
	if (dir == NULL) {
		close_parent(d, dirfd);
		return -1;
	}
	while ((de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			each(ctx, de->d_name);
	closedir(dir);
	return 0;
}

int state_dir_sync(const struct state_dir *d, const char *rel)
{
	const char *leaf;
	int dirfd = parent_of(d, rel, false, &leaf), rc;

	if (dirfd < 0)
		return -1;
	rc = fsync(dirfd);
	close_parent(d, dirfd);
	return rc;
}

const char *state_dir_name(const struct state_dir *d, const char *rel, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", d->path, rel);
	return out;
}

const char *state_dir_culprit(const struct state_dir *d, const char *rel, char *out, size_t len)
{
	const char *slash = strchr(rel, '/');
	struct stat st;

	if (slash && slash - rel < SUBDIR_MAX) {
		char sub[SUBDIR_MAX];
		memcpy(sub, rel, (size_t)(slash - rel));
		sub[slash - rel] = '\0';
		if (fstatat(d->fd, sub, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
			snprintf(out, len, "%s/%s", d->path, sub);
			return out;
		}
	}
	return state_dir_name(d, rel, out, len);
}

const char *state_dir_strerror(int e)
{
	switch (e) {
	case ELOOP:  return "a symbolic link (links in the state directory are never followed)";
	case EINVAL: return "not a regular file (or directory) as the state directory holds";
	case EPERM:  return "owned by a user other than root, bloomd's user or the state directory's owner";
	default:     return strerror(e);
	}
}

/* ---- the hand-over to [service] user ---- */

/*
 * Whether the entry st describes is one bloomd made and may hand over: a
 * directory, or a file with no other name (a hard link to someone else's
 * file, planted by the service user, would be given away with it), made by
 * root or by bloomd, or the user's already.
 */
static bool ours_to_give(const struct stat *st, uid_t uid)
{
	bool made_here = st->st_uid == 0 || st->st_uid == geteuid() || st->st_uid == uid;

	return made_here && (S_ISDIR(st->st_mode) || (S_ISREG(st->st_mode) && st->st_nlink == 1));
}

/* name in dirfd given to uid:gid if ours_to_give says so; checked and given through one descriptor, never a link. */
static int give_entry(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat st;
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) < 0)
		rc = -1;
	else if (ours_to_give(&st, uid) && (st.st_uid != uid || st.st_gid != gid))
		rc = fchownat(fd, "", uid, gid, AT_EMPTY_PATH);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* Each entry of the directory at dirfd that bloomd made given to uid:gid; the others are left as they are. */
static int give_entries(int dirfd, uid_t uid, gid_t gid, const char *where, char *err, size_t errlen)
{
	int copy = dup(dirfd);
	DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
	struct dirent *de;
	int rc = 0;

	if (dir == NULL) {
		if (copy >= 0)
			close(copy);
		error_set(err, errlen, "%s: %s", where, strerror(errno));
		return -1;
	}
	while (rc == 0 && (de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (give_entry(dirfd, de->d_name, uid, gid) < 0) {
			error_set(err, errlen, "%s/%s: cannot give it to uid %u: %s", where, de->d_name, (unsigned)uid,
				  strerror(errno));
			rc = -1;
		}
	}
	closedir(dir);
	return rc;
}

int state_dir_give(struct state_dir *d, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char where[4200];
	const char *leaf;

	if (d->fd < 0)
		return 0;
	d->give = true;
	d->owner = uid;
	d->group = gid;
	if (fchown(d->fd, uid, gid) < 0) {
		error_set(err, errlen, "%s: cannot give it to uid %u: %s", d->path, (unsigned)uid, strerror(errno));
		return -1;
	}
	if (give_entries(d->fd, uid, gid, d->path, err, errlen) < 0)
		return -1;
	d->dir_owner = uid;
	static const char *const subdirs[][2] = { { "lists", "lists/x" }, { "fetch", "fetch/x" }, { "revs", "revs/x" } };
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		int sub = parent_of(d, subdirs[i][1], false, &leaf);
		if (sub < 0 && errno == ENOENT)
			continue;
		if (sub < 0) {
			error_set(err, errlen, "%s: %s", state_dir_name(d, subdirs[i][0], where, sizeof(where)),
				  state_dir_strerror(errno));
			return -1;
		}
		int rc = give_entries(sub, uid, gid, state_dir_name(d, subdirs[i][0], where, sizeof(where)), err, errlen);
		close_parent(d, sub);
		if (rc < 0)
			return -1;
	}
	return 0;
}
