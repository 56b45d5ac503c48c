/*
 * bench_encode: the insert hot path, dnsnap_msg_encode(), over the test corpus
 * (200+ varied responses built with ldns). Prints a table, or JSON with --json.
 *
 * Not a test: timings on a shared 2-core machine are noisy. Each figure is the
 * median of 9 rounds; for counts that do not drift, run it under
 * valgrind --tool=callgrind with --rounds 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus.h"
#include "dnsnap.h"
#include "timing.h"

int main(int argc, char **argv)
{
	int json = 0, rounds = 9, reps = 200;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]), reps = rounds == 1 ? 1 : reps;
	}
	size_t n = corpus_count();
	uint8_t **msg = calloc(n, sizeof *msg);
	size_t *len = calloc(n, sizeof *len);
	dnsnap_encoded_t *enc = malloc(sizeof *enc);
	size_t wire = 0, entry = 0, key = 0;
	for (size_t i = 0; i < n; i++) {
		if (corpus_message(i, &msg[i], &len[i]) != 0 ||
		    dnsnap_msg_encode(msg[i], len[i], 1700000000u, NULL, 0, enc, NULL) != DNSNAP_OK)
			return fprintf(stderr, "bench_encode: corpus item %zu fails\n", i), 1;
		wire += len[i];
		entry += enc->entry_len;
		key += enc->key_len;
	}
	double *ns = calloc((size_t)rounds, sizeof *ns);
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int k = 0; k < reps; k++)
			for (size_t i = 0; i < n; i++)
				dnsnap_msg_encode(msg[i], len[i], 1700000000u, NULL, 0, enc, NULL);
		ns[r] = (now_ns() - t0) / ((double)reps * (double)n);
	}
	qsort(ns, (size_t)rounds, sizeof *ns, cmp_double);
	double med = ns[rounds / 2];
	if (json)
		printf("{\"bench\":\"encode\",\"messages\":%zu,\"wire_bytes\":%zu,\"key_bytes\":%zu,"
		       "\"entry_bytes\":%zu,\"encode_ns_median\":%.1f,\"encode_per_s\":%.0f}\n",
		       n, wire, key, entry, med, 1e9 / med);
	else
		printf("encode: %zu corpus responses, %zu wire bytes -> %zu key + %zu entry bytes "
		       "(entry/wire %.2f)\n"
		       "median of %d rounds: %.0f ns per response, %.2fM responses/s (min %.0f, max %.0f ns)\n",
		       n, wire, key, entry, (double)entry / (double)wire, rounds, med, 1e3 / med,
		       ns[0], ns[rounds - 1]);
	for (size_t i = 0; i < n; i++)
		free(msg[i]);
	free(msg);
	free(len);
	free(enc);
	free(ns);
	return 0;
}
