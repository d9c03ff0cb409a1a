/* rocksdb/rocksdb_namespace.h - RocksDB's namespace. */
#pragma once
#ifndef ROCKSDB_NAMESPACE
#define ROCKSDB_NAMESPACE rocksdb
#endif
