/*
 * timing.h: the clock and the small statistics the benchmarks share.
 */
#ifndef DNSNAP_BENCH_TIMING_H
#define DNSNAP_BENCH_TIMING_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median cost of an empty timed region, subtracted from timed lookups. */
static inline uint32_t timer_overhead(void)
{
	enum { K = 100001 };
	static uint32_t d[K];
	for (int k = 0; k < K; k++) {
		uint64_t a = now_ns();
		uint64_t b = now_ns();
		d[k] = (uint32_t)(b - a);
	}
	qsort(d, K, sizeof d[0], cmp_u32);
	return d[K / 2];
}

#endif
