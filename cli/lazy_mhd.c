/*
 * lazy_mhd.c: the libmicrohttpd functions of serve's metrics endpoint
 * (cli/serve/metrics.c), opened when --metrics is given (lazy.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lazy.h"

#ifndef LAZY_SONAME
#error "LAZY_SONAME: the soname the linker records for -lmicrohttpd (the Makefile)"
#endif
#ifndef LAZY_PACKAGE
#define LAZY_PACKAGE ""
#endif

/* MHD_start_daemon() takes options as varargs: its stub, below, hands them
 * to MHD_start_daemon_va(), which is in the list instead. */
#define MHD_FNS(F, V)                                                                      \
	F(enum MHD_Result, MHD_add_response_header,                                          \
	  (struct MHD_Response *r, const char *h, const char *c), (r, h, c))                 \
	F(struct MHD_Response *, MHD_create_response_from_buffer,                            \
	  (size_t n, void *b, enum MHD_ResponseMemoryMode m), (n, b, m))                     \
	V(MHD_destroy_response, (struct MHD_Response *r), (r))                               \
	F(enum MHD_Result, MHD_queue_response,                                               \
	  (struct MHD_Connection *c, unsigned int status, struct MHD_Response *r),           \
	  (c, status, r))                                                                  \
	F(struct MHD_Daemon *, MHD_start_daemon_va,                                          \
	  (unsigned int fl, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,      \
	   MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap),                          \
	  (fl, port, apc, apc_cls, dh, dh_cls, ap))                                        \
	V(MHD_stop_daemon, (struct MHD_Daemon *d), (d))

LAZY_STUBS(MHD_FNS, "libmicrohttpd", LAZY_SONAME, "DNSNAP_SONAME_MICROHTTPD",
	   LAZY_PACKAGE)

struct MHD_Daemon *MHD_start_daemon(unsigned int fl, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = MHD_start_daemon_va(fl, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

const char *lazy_mhd(void)
{
	return lazy_load(&lazy_this) == 0 ? NULL : lazy_this.msg;
}
