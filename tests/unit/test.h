/* test.h - cmocka with TAP output, so prove runs every suite the same way. */
#ifndef BLOOMD_TEST_H
#define BLOOMD_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define TEST_MAIN(name, tests)                                                   \
	int main(void)                                                           \
	{                                                                        \
		cmocka_set_message_output(CM_OUTPUT_TAP);                        \
		return cmocka_run_group_tests_name(name, tests, NULL, NULL);     \
	}

#endif
