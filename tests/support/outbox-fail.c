/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * outbox-fail.c - an LD_PRELOAD shim for tests/cluster-faults.t: while the file named by
 * BLOOMD_FAIL_FLAG exists, write(2) and fdatasync(2) on a descriptor open on a file named
 * cluster.outbox fail with ENOSPC, as on a full disk; everything else goes through. So the
 * outbox alone fails, with the journal beside it written as ever.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failing(int fd)
{
	static const char name[] = "/cluster.outbox";
	const char *flag = getenv("BLOOMD_FAIL_FLAG");
	char link[64], path[4096];
	ssize_t n;

	if (flag == NULL || access(flag, F_OK) != 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) < 0)
		return 0;
	path[n] = '\0';
	return (size_t)n >= sizeof(name) - 1 && strcmp(path + n - (sizeof(name) - 1), name) == 0;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	ssize_t (*real)(int, const void *, size_t) = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");

	if (failing(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, count);
}

int fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");

	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}
