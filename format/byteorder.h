/*
 * byteorder.h: the short names, inside the tree (format, engine, ingest,
 * tests, benchmarks), of the one set of loads and stores of fixed-width
 * integers that dnsnap_format.h declares (dnsnap_load_be16() ...): ld16le()
 * reads a little-endian u16 (the entry layout), ld16be() a big-endian one
 * (DNS messages, keys, pcap headers in network order), ld32h() one in this
 * host's order (LMDB's page fields). Not installed: a program outside the
 * tree uses the dnsnap_ names.
 */
#ifndef DNSNAP_BYTEORDER_H
#define DNSNAP_BYTEORDER_H

#include "dnsnap_format.h"

#define ld16le dnsnap_load_le16
#define ld32le dnsnap_load_le32
#define ld64le dnsnap_load_le64
#define ld16be dnsnap_load_be16
#define ld32be dnsnap_load_be32
#define ld64be dnsnap_load_be64
#define ld16h dnsnap_load_host16
#define ld32h dnsnap_load_host32
#define ld64h dnsnap_load_host64
#define st16le dnsnap_store_le16
#define st32le dnsnap_store_le32
#define st64le dnsnap_store_le64
#define st16be dnsnap_store_be16
#define st32be dnsnap_store_be32

#endif
