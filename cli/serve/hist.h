/*
 * hist.h: a latency histogram with fixed buckets, written by one thread (or
 * by several with relaxed atomic adds) and read by the metrics renderers.
 * The buckets are Prometheus's cumulative "le" bounds in microseconds; the
 * last counts everything above the largest bound (+Inf). They are the
 * library's upstream latency buckets (forward.h), so that every latency
 * family serve renders has the same bounds.
 */
#ifndef DNSNAP_SERVE_HIST_H
#define DNSNAP_SERVE_HIST_H

#include <stdatomic.h>
#include <stdint.h>

#include "forward.h"

#define HIST_N DNSNAP_FWD_LATENCY_N

/* Upper bounds of the buckets, in microseconds (a bucket holds what is at
 * most its bound and above the one before). */
static const uint32_t hist_bounds_us[HIST_N] = DNSNAP_FWD_LATENCY_BOUNDS_US;

struct hist {
	_Atomic uint64_t b[HIST_N + 1]; /* b[HIST_N]: above the largest bound */
	_Atomic uint64_t count;
	_Atomic uint64_t sum_us;
};

/* @p n observations of @p us each (a batch answered at once) */
static inline void hist_addn(struct hist *h, uint64_t us, uint64_t n)
{
	unsigned i = 0;
	while (i < HIST_N && us > hist_bounds_us[i])
		i++;
	atomic_fetch_add_explicit(&h->b[i], n, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, us * n, memory_order_relaxed);
}

static inline void hist_add(struct hist *h, uint64_t us)
{
	hist_addn(h, us, 1);
}

/* @p into += @p h (the renderers sum per-thread histograms) */
static inline void hist_sum(struct hist *into, const struct hist *h)
{
	for (unsigned i = 0; i <= HIST_N; i++)
		atomic_fetch_add_explicit(&into->b[i],
					  atomic_load_explicit(&h->b[i], memory_order_relaxed),
					  memory_order_relaxed);
	atomic_fetch_add_explicit(&into->count,
				  atomic_load_explicit(&h->count, memory_order_relaxed),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&into->sum_us,
				  atomic_load_explicit(&h->sum_us, memory_order_relaxed),
				  memory_order_relaxed);
}

#endif
