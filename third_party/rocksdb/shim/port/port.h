/* port/port.h - what RocksDB's util/bloom_impl.h takes from port.h: PREFETCH. */
#pragma once
#define PREFETCH(addr, rw, locality) __builtin_prefetch(addr, rw, locality)
