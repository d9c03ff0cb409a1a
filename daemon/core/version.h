/* version.h - bloomd's version, which bloomctl --version and the version command say. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_VERSION_H
#define BLOOMD_VERSION_H

#define BLOOMD_VERSION "0.34.0"

#endif
