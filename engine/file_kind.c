/*
 * file_kind.c: what kind of file a command was given (dnsnap_file_kind(),
 * dnsnap.h), so that a snapshot given to import, a stream given to info or a
 * capture given to verify is named in the message, not reported as bad data.
 */
#include <string.h>

#include "byteorder.h"
#include "dnsnap.h"
#include "snap_internal.h"

dnsnap_file_kind_t dnsnap_file_kind(const uint8_t *p, size_t n)
{
	if (n < 4)
		return DNSNAP_FILE_OTHER;
	uint32_t m = ld32le(p);
	/* first: an LMDB file starts with page 0's number, zeros, never these */
	if (m == 0xfd2fb528u || (m & 0xfffffff0u) == 0x184d2a50u) /* zstd; skippable */
		return DNSNAP_FILE_STREAM;
	if (n >= 20 && (ld32le(p + 16) == LMDB_MAGIC ||
			ld32le(p + 16) == __builtin_bswap32(LMDB_MAGIC)))
		return DNSNAP_FILE_SNAPSHOT;
	if (memcmp(p, STREAM_MAGIC, 4) == 0)
		return DNSNAP_FILE_STREAM_RAW;
	if (m == 0xa1b2c3d4u || m == 0xd4c3b2a1u || m == 0xa1b23c4du || m == 0x4d3cb2a1u ||
	    m == 0x0a0d0d0au)
		return DNSNAP_FILE_CAPTURE;
	if (n >= 17 && memcmp(p, "START_RRSET_CACHE", 17) == 0)
		return DNSNAP_FILE_UNBOUND;
	return DNSNAP_FILE_OTHER;
}

const char *dnsnap_file_kind_text(dnsnap_file_kind_t kind)
{
	switch (kind) {
	case DNSNAP_FILE_SNAPSHOT:
		return "it is an LMDB file, a dnsnap snapshot, which dnsnap export turns into a "
		       "stream";
	case DNSNAP_FILE_STREAM:
		return "it is zstd-compressed, like an export stream, which dnsnap import turns "
		       "into a snapshot";
	case DNSNAP_FILE_STREAM_RAW:
		return "it is an export stream decompressed; dnsnap import takes it "
		       "zstd-compressed, as dnsnap export writes it";
	case DNSNAP_FILE_CAPTURE:
		return "it is a packet capture, which dnsnap load reads into a snapshot";
	case DNSNAP_FILE_UNBOUND:
		return "it is Unbound's cache text, which dnsnap load reads into a snapshot";
	case DNSNAP_FILE_OTHER:
		break;
	}
	return "";
}
