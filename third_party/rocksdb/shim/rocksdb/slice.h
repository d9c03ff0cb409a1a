/* rocksdb/slice.h - util/bloom_impl.h includes it; nothing it uses is in it. */
#pragma once
#include "rocksdb/rocksdb_namespace.h"
