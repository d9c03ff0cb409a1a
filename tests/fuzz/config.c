/* Fuzz harness: config_load on any file content. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

static char path[64];

static void clean(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/bloomd-fuzz-config-%d", (int)getpid());
		atexit(clean);
	}
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	config_free(config_load(path, ignore, NULL));
	return 0;
}
