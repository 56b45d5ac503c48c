/*
 * lazy_ldns.c: the ldns functions the tool calls (cli/print.c, cli/filter.c,
 * engine/ingest/unbound.c), opened at their first call (lazy.h). A function
 * newly called there is added here, or the tool's link fails.
 */
#include <ldns/ldns.h>

#include "lazy.h"

#ifndef LAZY_SONAME
#error "LAZY_SONAME: the Makefile passes the soname the linker records for -lldns"
#endif
#ifndef LAZY_PACKAGE
#define LAZY_PACKAGE ""
#endif

#define LDNS_FNS(F, V)                                                                     \
	V(ldns_buffer_free, (ldns_buffer *b), (b))                                         \
	F(ldns_buffer *, ldns_buffer_new, (size_t cap), (cap))                             \
	F(ldns_rdf *, ldns_dname_new_frm_data, (uint16_t n, const void *d), (n, d))          \
	F(ldns_rdf *, ldns_dname_new_frm_str, (const char *s), (s))                          \
	F(const char *, ldns_get_errorstr_by_id, (ldns_status e), (e))                       \
	F(ldns_rr_class, ldns_get_rr_class_by_name, (const char *s), (s))                    \
	F(ldns_rr_type, ldns_get_rr_type_by_name, (const char *s), (s))                      \
	F(ldns_rr_list *, ldns_pkt_additional, (const ldns_pkt *p), (p))                     \
	F(ldns_rr_list *, ldns_pkt_answer, (const ldns_pkt *p), (p))                         \
	F(ldns_rr_list *, ldns_pkt_authority, (const ldns_pkt *p), (p))                      \
	F(bool, ldns_pkt_edns, (const ldns_pkt *p), (p))                                     \
	F(ldns_rdf *, ldns_pkt_edns_data, (const ldns_pkt *p), (p))                          \
	F(bool, ldns_pkt_edns_do, (const ldns_pkt *p), (p))                                  \
	F(uint8_t, ldns_pkt_edns_extended_rcode, (const ldns_pkt *p), (p))                   \
	F(uint16_t, ldns_pkt_edns_udp_size, (const ldns_pkt *p), (p))                        \
	F(uint8_t, ldns_pkt_edns_version, (const ldns_pkt *p), (p))                          \
	F(uint16_t, ldns_pkt_edns_z, (const ldns_pkt *p), (p))                               \
	V(ldns_pkt_free, (ldns_pkt *p), (p))                                                 \
	F(ldns_rr_list *, ldns_pkt_question, (const ldns_pkt *p), (p))                       \
	F(char *, ldns_rdf2str, (const ldns_rdf *r), (r))                                    \
	F(uint8_t *, ldns_rdf_data, (const ldns_rdf *r), (r))                                \
	V(ldns_rdf_deep_free, (ldns_rdf *r), (r))                                            \
	F(ldns_rdf_type, ldns_rdf_get_type, (const ldns_rdf *r), (r))                        \
	F(ldns_rdf *, ldns_rdf_new_frm_data, (ldns_rdf_type t, size_t n, const void *d),     \
	  (t, n, d))                                                                       \
	F(size_t, ldns_rdf_size, (const ldns_rdf *r), (r))                                   \
	F(char *, ldns_rr2str_fmt, (const ldns_output_format *f, const ldns_rr *rr), (f, rr)) \
	F(char *, ldns_rr_class2str, (const ldns_rr_class c), (c))                           \
	F(const ldns_rr_descriptor *, ldns_rr_descript, (uint16_t t), (t))                   \
	V(ldns_rr_free, (ldns_rr *rr), (rr))                                                 \
	F(ldns_rr_class, ldns_rr_get_class, (const ldns_rr *rr), (rr))                       \
	F(ldns_rr_type, ldns_rr_get_type, (const ldns_rr *rr), (rr))                         \
	F(ldns_rr *, ldns_rr_list_rr, (const ldns_rr_list *l, size_t i), (l, i))             \
	F(size_t, ldns_rr_list_rr_count, (const ldns_rr_list *l), (l))                       \
	F(ldns_rr *, ldns_rr_new, (void), ())                                                \
	F(ldns_status, ldns_rr_new_frm_str,                                                  \
	  (ldns_rr **n, const char *s, uint32_t ttl, const ldns_rdf *o, ldns_rdf **prev),    \
	  (n, s, ttl, o, prev))                                                            \
	F(ldns_status, ldns_rr_new_question_frm_str,                                         \
	  (ldns_rr **n, const char *s, const ldns_rdf *o, ldns_rdf **prev), (n, s, o, prev)) \
	F(ldns_rdf *, ldns_rr_owner, (const ldns_rr *rr), (rr))                              \
	F(size_t, ldns_rr_rd_count, (const ldns_rr *rr), (rr))                               \
	F(ldns_status, ldns_rr_rdata2buffer_wire, (ldns_buffer *b, const ldns_rr *rr), (b, rr)) \
	F(ldns_rdf *, ldns_rr_rdf, (const ldns_rr *rr, size_t i), (rr, i))                   \
	V(ldns_rr_set_class, (ldns_rr *rr, ldns_rr_class c), (rr, c))                        \
	V(ldns_rr_set_owner, (ldns_rr *rr, ldns_rdf *o), (rr, o))                            \
	V(ldns_rr_set_ttl, (ldns_rr *rr, uint32_t ttl), (rr, ttl))                           \
	V(ldns_rr_set_type, (ldns_rr *rr, ldns_rr_type t), (rr, t))                          \
	F(uint32_t, ldns_rr_ttl, (const ldns_rr *rr), (rr))                                  \
	F(char *, ldns_rr_type2str, (const ldns_rr_type t), (t))                             \
	F(ldns_status, ldns_str2rdf_dname, (ldns_rdf **r, const char *s), (r, s))            \
	F(ldns_status, ldns_wire2pkt, (ldns_pkt **p, const uint8_t *w, size_t n), (p, w, n)) \
	F(ldns_status, ldns_wire2rdf, (ldns_rr *rr, const uint8_t *w, size_t n, size_t *pos), \
	  (rr, w, n, pos))                                                                 \
	F(ldns_status, ldns_wire2rr,                                                         \
	  (ldns_rr **rr, const uint8_t *w, size_t n, size_t *pos, ldns_pkt_section s),       \
	  (rr, w, n, pos, s))

LAZY_STUBS(LDNS_FNS, "ldns", LAZY_SONAME, "DNSNAP_SONAME_LDNS", LAZY_PACKAGE)

const char *lazy_ldns(void)
{
	return lazy_load(&lazy_this) == 0 ? NULL : lazy_this.msg;
}
