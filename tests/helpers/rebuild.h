/*
 * rebuild.h: turn a (key, entry) pair back into an uncompressed DNS response,
 * for round-trip tests: message -> dnsnap_msg_encode -> rebuild_message ->
 * dnsnap_msg_encode again must give the same key and entry.
 */
#ifndef DNSNAP_TEST_REBUILD_H
#define DNSNAP_TEST_REBUILD_H

#include <stddef.h>
#include <stdint.h>

/**
 * Write a DNS response holding what the entry holds:
 *  - header: ID 0; QR; AD when the entry's AUTH flag is set; CD when the key's
 *    CD flag is set; RCODE from the entry; QDCOUNT 1; AN/NS/AR counts from the
 *    records on either side of Auth_Off and Addl_Off;
 *  - the question: the key's name (lower case), qtype and qclass;
 *  - every record in entry order, owners and rdata uncompressed, owners as the
 *    iterator resolves them (elided owners become the key's name);
 *  - when the entry has EDE options: an OPT record (root, UDP size 1232, TTL 0)
 *    at the end of the additional section holding them, in order.
 * Nothing else (OPT fields, TSIG, other options) survives ingest, so nothing
 * else is written.
 *
 * The key and entry must be valid (dnsnap_key_decode, dnsnap_entry_validate).
 *
 * @param[out] out  the message; @p out_len is set only on success
 * @return DNSNAP_OK; DNSNAP_ENOSPC when @p cap is too small; DNSNAP_ETOOBIG
 *         when the message would exceed 65535 bytes (the DNS limit) or a
 *         count 65535 records; or the error of the key or entry decoder
 */
int rebuild_message(const uint8_t *key, size_t key_len, const uint8_t *entry, size_t entry_len,
		    uint8_t *out, size_t cap, size_t *out_len);

#endif /* DNSNAP_TEST_REBUILD_H */
