/* util/hash.h - what util/bloom_impl.h takes from RocksDB's hash.h: FastRange32. */
#pragma once
#include "util/fastrange.h"
