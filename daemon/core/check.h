/* check.h - invariants: checked at run time in debug and sanitizer builds, and at compile time always. */
#ifndef BLOOMD_CHECK_H
#define BLOOMD_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/*
 * BLOOMD_ASSERT(cond) states an invariant a header documents (the holder
 * bits, a ring's indices, a filter's fill): a failure is a bug in bloomd,
 * not bad input, which is always answered with an error instead. Built
 * with BLOOMD_CHECKS (make DEBUG=1, and every SANITIZE build: make check
 * runs the suite under ASan+UBSan with them on), a failed one says where
 * and aborts; otherwise it costs nothing. Constants that must agree are
 * pinned with _Static_assert next to where they are used.
 */
#ifdef BLOOMD_CHECKS
#define BLOOMD_ASSERT(cond)                                                                                  \
	((cond) ? (void)0                                                                                     \
		: (fprintf(stderr, "bloomd: %s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond), abort()))
#else
#define BLOOMD_ASSERT(cond) ((void)0)
#endif

#endif
