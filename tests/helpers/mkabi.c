/*
 * mkabi: the layout of the public structures that contrib/unbound/dnsnap.py
 * declares again with ctypes, as this compiler lays them out, for
 * tests/cli/test_unbound_module.sh to compare with ctypes' own.
 *
 *   mkabi      one line per structure, "NAME size N", then one per field,
 *              "NAME.FIELD N", its offset
 *
 * The names are the module's class names; the fields are engine/dnsnap.h's.
 */
#include <stddef.h>
#include <stdio.h>

#include "dnsnap.h"

#define SIZE(n, t) printf("%s size %zu\n", n, sizeof(t))
#define FIELD(n, t, f) printf("%s.%s %zu\n", n, #f, offsetof(t, f))

static void query(void)
{
	SIZE("Query", dnsnap_query_t);
	FIELD("Query", dnsnap_query_t, msg);
	FIELD("Query", dnsnap_query_t, len);
	FIELD("Query", dnsnap_query_t, id);
	FIELD("Query", dnsnap_query_t, flags);
	FIELD("Query", dnsnap_query_t, qname_off);
	FIELD("Query", dnsnap_query_t, qname_len);
	FIELD("Query", dnsnap_query_t, question_end);
	FIELD("Query", dnsnap_query_t, qtype);
	FIELD("Query", dnsnap_query_t, qclass);
	FIELD("Query", dnsnap_query_t, edns);
	FIELD("Query", dnsnap_query_t, udp_size);
	FIELD("Query", dnsnap_query_t, do_bit);
	FIELD("Query", dnsnap_query_t, key);
	FIELD("Query", dnsnap_query_t, key_len);
}

static void cache(void)
{
	SIZE("Lookup", dnsnap_lookup_t);
	FIELD("Lookup", dnsnap_lookup_t, now);
	FIELD("Lookup", dnsnap_lookup_t, max_size);
	FIELD("Lookup", dnsnap_lookup_t, stale_window);
	FIELD("Lookup", dnsnap_lookup_t, tier);
	FIELD("Lookup", dnsnap_lookup_t, stale);
	FIELD("Lookup", dnsnap_lookup_t, cd_fallback);
	SIZE("CacheOpts", dnsnap_cache_opts_t);
	FIELD("CacheOpts", dnsnap_cache_opts_t, max_bytes);
	FIELD("CacheOpts", dnsnap_cache_opts_t, max_entries);
	FIELD("CacheOpts", dnsnap_cache_opts_t, min_ttl);
	FIELD("CacheOpts", dnsnap_cache_opts_t, max_ttl);
	FIELD("CacheOpts", dnsnap_cache_opts_t, max_neg_ttl);
	FIELD("CacheOpts", dnsnap_cache_opts_t, serve_stale);
	FIELD("CacheOpts", dnsnap_cache_opts_t, stale_window);
	FIELD("CacheOpts", dnsnap_cache_opts_t, rotate);
	FIELD("CacheOpts", dnsnap_cache_opts_t, our_udp_size);
	SIZE("Encoded", dnsnap_encoded_t);
	FIELD("Encoded", dnsnap_encoded_t, key);
	FIELD("Encoded", dnsnap_encoded_t, key_len);
	FIELD("Encoded", dnsnap_encoded_t, entry_len);
	FIELD("Encoded", dnsnap_encoded_t, qname_off);
	FIELD("Encoded", dnsnap_encoded_t, qname_len);
	FIELD("Encoded", dnsnap_encoded_t, ttl);
	FIELD("Encoded", dnsnap_encoded_t, entry);
	SIZE("CacheStats", dnsnap_cache_stats_t);
	FIELD("CacheStats", dnsnap_cache_stats_t, entries);
	FIELD("CacheStats", dnsnap_cache_stats_t, bytes);
	FIELD("CacheStats", dnsnap_cache_stats_t, hits);
	FIELD("CacheStats", dnsnap_cache_stats_t, inserts);
	FIELD("CacheStats", dnsnap_cache_stats_t, kept);
}

static void snapshots(void)
{
	SIZE("Diag", dnsnap_diag_t);
	FIELD("Diag", dnsnap_diag_t, offset);
	FIELD("Diag", dnsnap_diag_t, msg);
	SIZE("SnapInfo", dnsnap_snap_info_t);
	FIELD("SnapInfo", dnsnap_snap_info_t, major);
	FIELD("SnapInfo", dnsnap_snap_info_t, created_at);
	FIELD("SnapInfo", dnsnap_snap_info_t, entry_count);
	FIELD("SnapInfo", dnsnap_snap_info_t, file_size);
	FIELD("SnapInfo", dnsnap_snap_info_t, writer);
	SIZE("WriteStats", dnsnap_snap_write_stats_t);
	FIELD("WriteStats", dnsnap_snap_write_stats_t, entries);
	FIELD("WriteStats", dnsnap_snap_write_stats_t, longest_pause_ms);
	FIELD("WriteStats", dnsnap_snap_write_stats_t, from_base);
	FIELD("WriteStats", dnsnap_snap_write_stats_t, stream_bytes);
	SIZE("PublishOpts", dnsnap_publish_opts_t);
	FIELD("PublishOpts", dnsnap_publish_opts_t, now);
	FIELD("PublishOpts", dnsnap_publish_opts_t, wait_seconds);
	FIELD("PublishOpts", dnsnap_publish_opts_t, flags);
	SIZE("PublishStats", dnsnap_publish_stats_t);
	FIELD("PublishStats", dnsnap_publish_stats_t, write);
	FIELD("PublishStats", dnsnap_publish_stats_t, base_merged);
	FIELD("PublishStats", dnsnap_publish_stats_t, base_err);
	FIELD("PublishStats", dnsnap_publish_stats_t, base_msg);
	printf("PUBLISH_DROP_DAMAGED %u\nPUBLISH_REPLACE_BAD %u\n", DNSNAP_PUBLISH_DROP_DAMAGED,
	       DNSNAP_PUBLISH_REPLACE_BAD);
	printf("OK %d\nENOTFOUND %d\nKEY_MAX %d\nENTRY_MAX %d\n", DNSNAP_OK, DNSNAP_ENOTFOUND,
	       DNSNAP_KEY_MAX, DNSNAP_ENTRY_MAX);
}

int main(void)
{
	query();
	cache();
	snapshots();
	return ferror(stdout) ? 1 : 0;
}
