/*
 * lazy_pcap.c: the libpcap functions the capture reader calls
 * (engine/ingest/capture.c), opened at their first call (lazy.h): by
 * `dnsnap load` given a capture, and by nothing else.
 */
#include <pcap/pcap.h>

#include "lazy.h"

#ifndef LAZY_SONAME
#error "LAZY_SONAME: the Makefile passes the soname the linker records for -lpcap"
#endif
#ifndef LAZY_PACKAGE
#define LAZY_PACKAGE ""
#endif

/* pcap.h makes pcap_fopen_offline_with_tstamp_precision a macro on Windows only */
#define PCAP_FNS(F, V)                                                                     \
	V(pcap_close, (pcap_t *p), (p))                                                      \
	F(int, pcap_datalink, (pcap_t *p), (p))                                              \
	F(const char *, pcap_datalink_val_to_name, (int dlt), (dlt))                         \
	F(pcap_t *, pcap_fopen_offline_with_tstamp_precision, (FILE *f, u_int prec, char *e), \
	  (f, prec, e))                                                                    \
	F(char *, pcap_geterr, (pcap_t *p), (p))                                             \
	F(int, pcap_next_ex, (pcap_t *p, struct pcap_pkthdr **h, const u_char **d), (p, h, d))

LAZY_STUBS(PCAP_FNS, "libpcap", LAZY_SONAME, "DNSNAP_SONAME_PCAP", LAZY_PACKAGE)

const char *lazy_pcap(void)
{
	return lazy_load(&lazy_this) == 0 ? NULL : lazy_this.msg;
}
