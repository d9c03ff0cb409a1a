/* privilege.c - giving up privileges once the capture is open. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "privilege.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "error.h"

static int switch_user(const char *user, const struct privilege_file *own, size_t nown, char *err,
		       size_t errlen)
{
	struct passwd *pw = getpwnam(user);

	if (pw == NULL) {
		error_set(err, errlen, "[service] user '%s' does not exist; not going on as root", user);
		return -1;
	}
	for (size_t i = 0; i < nown; i++)
		if (own[i].path && lchown(own[i].path, pw->pw_uid, own[i].keep_group ? (gid_t)-1 : pw->pw_gid) < 0 &&
		    errno != ENOENT) {
			error_set(err, errlen, "%s: cannot give it to %s: %s", own[i].path, user, strerror(errno));
			return -1;
		}
	if (initgroups(user, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
		error_set(err, errlen, "cannot switch to user %s: %s; not going on as root", user,
			  strerror(errno));
		return -1;
	}
	if (setuid(0) == 0) {
		error_set(err, errlen, "switched to user %s, but could become root again; stopping", user);
		return -1;
	}
	return 0;
}

/* Every capability given up but those keep names (permitted and effective). */
static int drop_capabilities(unsigned keep, char *err, size_t errlen)
{
	cap_value_t kept[3];
	int n = 0, rc = -1;
	cap_t caps = cap_init();

	if (keep & PRIVILEGE_NET_ADMIN)
		kept[n++] = CAP_NET_ADMIN;
	if (keep & PRIVILEGE_BPF) {
		kept[n++] = CAP_BPF;
		kept[n++] = CAP_PERFMON;
	}
	if (caps && (n == 0 || (cap_set_flag(caps, CAP_PERMITTED, n, kept, CAP_SET) == 0 &&
				cap_set_flag(caps, CAP_EFFECTIVE, n, kept, CAP_SET) == 0)))
		rc = cap_set_proc(caps);
	cap_free(caps);
	if (rc < 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		error_set(err, errlen, keep & PRIVILEGE_BPF ? "cannot keep only CAP_NET_ADMIN, CAP_BPF and CAP_PERFMON (mode = xdp loads its programs with them): %s"
			  : keep ? "cannot keep only CAP_NET_ADMIN (inline mode needs it for its verdicts): %s"
				 : "cannot drop capabilities: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int privilege_drop(const char *user, const struct privilege_file *own, size_t nown, unsigned keep,
		   char *err, size_t errlen)
{
	/* Across the user switch, the permitted set survives only so; the effective one is set again below. */
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
		error_set(err, errlen, "cannot keep capabilities across the user switch: %s", strerror(errno));
		return -1;
	}
	if (user && geteuid() == 0 && switch_user(user, own, nown, err, errlen) < 0)
		return -1;
	return drop_capabilities(keep, err, errlen);
}
