/*
 * histogram.c - a distributed histogram built with remote atomics.
 *
 * One global array of NBINS 64-bit counters is spread over all ranks (a block
 * of bins per rank).  Every rank draws KEYS pseudo-random keys from a seed
 * that depends on its rank, and counts each key with a remote atomic add on
 * the counter's owner, wherever that is.  Then:
 *   - every rank checks the counters it owns, reading them in place, against
 *     a reference it computes alone (it can regenerate every rank's keys);
 *   - rank 0 fetches the whole histogram with one gas_get, which the runtime
 *     splits across the owners, checks it again and prints a summary.
 * The program exits non-zero when any counter is wrong.
 *
 *   gasrun -n 4 build/examples/histogram [keys-per-rank [bins]]
 */
#include <gas.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_KEYS 200000
#define DEFAULT_BINS 1000
#define TOP 5

/*
 * Every call returns a status.  With GAS_ERRORS=abort (the default) a failing
 * call never returns; with GAS_ERRORS=return we end the job here ourselves.
 */
static void check(gas_status_t status, const char *call)
{
    if (status != GAS_OK) {
        fprintf(stderr, "histogram: rank %d: %s failed: %s\n", gas_rank(), call,
                gas_last_error());
        gas_abort(1, "histogram: a libgas call failed");
    }
}

/* splitmix64: a small, good generator; a stream depends only on its seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rank_seed(int rank)
{
    return 0x5eed5eedull + (uint64_t)rank * 0x2545f4914f6cdd1dull;
}

/*
 * The next key's bin: the product of three uniform draws scaled back to
 * [0, nbins), so small bins are hot, like word frequencies in a text.
 */
static uint64_t next_bin(uint64_t *state, uint64_t nbins)
{
    uint64_t a = next_random(state) % nbins;
    uint64_t b = next_random(state) % nbins;
    uint64_t c = next_random(state) % nbins;
    return a * b / nbins * c / nbins;
}

/* The TOP fullest bins, fullest first: TOP passes of a plain selection. */
static int top_bins(const uint64_t *count, uint64_t nbins, uint64_t *top)
{
    int n;
    for (n = 0; n < TOP && (uint64_t)n < nbins; n++) {
        uint64_t best = nbins;
        for (uint64_t bin = 0; bin < nbins; bin++) {
            int taken = 0;
            for (int j = 0; j < n; j++)
                taken |= top[j] == bin;
            if (!taken && (best == nbins || count[bin] > count[best]))
                best = bin;
        }
        top[n] = best;
    }
    return n;
}

static uint64_t parse_count(const char *arg, uint64_t max)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 10);
    if (*end != '\0' || v == 0 || v > max) {
        fprintf(stderr, "usage: histogram [keys-per-rank [bins]] (got '%s')\n", arg);
        exit(2);
    }
    return v;
}

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    uint64_t keys = argc > 1 ? parse_count(argv[1], UINT64_C(1) << 40) : DEFAULT_KEYS;
    uint64_t nbins = argc > 2 ? parse_count(argv[2], UINT64_C(1) << 28) : DEFAULT_BINS;

    check(gas_init(), "gas_init");
    int me = gas_rank(), nranks = gas_nranks();

    /* 1. One global array of counters; its layout tells who owns which bin. */
    gas_ptr_t hist;
    gas_layout_t layout;
    check(gas_malloc(nbins * sizeof(uint64_t), &hist), "gas_malloc");
    check(gas_layout(hist, &layout), "gas_layout");

    /* Fresh memory is unspecified: each rank zeroes its own block in place. */
    memset(gas_ptr_local(gas_ptr_make(me, layout.local_offset)), 0, layout.local_bytes);
    check(gas_barrier(), "gas_barrier");

    /*
     * 2. Count my keys: one remote atomic add per key, on whichever rank owns
     * the bin.  gas_layout_ptr() finds the counter in O(1) without talking to
     * anyone (gas_ptr_index(hist, 8, bin, &p) does the same, checked).  The
     * adds are non-blocking; gas_quiet() waits until all of them are done.
     * (gas_atomic_add_u64(counter, 1) would wait for each add in turn.)
     */
    double start = now();
    uint64_t state = rank_seed(me);
    for (uint64_t k = 0; k < keys; k++) {
        gas_ptr_t counter = gas_layout_ptr(&layout, next_bin(&state, nbins) * sizeof(uint64_t));
        check(gas_amo_nbi(GAS_AMO_ADD, 8, counter, 1, 0, NULL), "gas_amo_nbi");
    }
    check(gas_quiet(), "gas_quiet");
    check(gas_barrier(), "gas_barrier"); /* now every rank's adds are done */
    double seconds = now() - start;

    /* 3. The reference: regenerate every rank's keys and count them locally. */
    uint64_t *expected = calloc(nbins, sizeof(uint64_t));
    uint64_t *global = malloc(nbins * sizeof(uint64_t));
    if (expected == NULL || global == NULL)
        gas_abort(1, "histogram: out of memory");
    for (int r = 0; r < nranks; r++) {
        state = rank_seed(r);
        for (uint64_t k = 0; k < keys; k++)
            expected[next_bin(&state, nbins)]++;
    }

    /* 4. Every rank checks the bins it owns, loading them in place. */
    uint64_t wrong = 0;
    for (uint64_t bin = 0; bin < nbins; bin++) {
        gas_ptr_t counter = gas_layout_ptr(&layout, bin * sizeof(uint64_t));
        if (gas_ptr_rank(counter) != me)
            continue;
        uint64_t got = *(const uint64_t *)gas_ptr_local(counter);
        if (got != expected[bin] && wrong++ < 5)
            fprintf(stderr, "rank %d: bin %" PRIu64 " holds %" PRIu64 ", expected %" PRIu64 "\n",
                    me, bin, got, expected[bin]);
    }

    /* 5. Rank 0 reads the whole array with one get across all owners. */
    if (me == 0) {
        check(gas_get(global, hist, nbins * sizeof(uint64_t)), "gas_get");
        uint64_t total = 0, top[TOP];
        for (uint64_t bin = 0; bin < nbins; bin++) {
            total += global[bin];
            wrong += global[bin] != expected[bin];
        }
        wrong += total != keys * (uint64_t)nranks;

        printf("histogram: %d ranks x %" PRIu64 " keys into %" PRIu64 " bins in %.3f s "
               "(%.2f M remote atomic adds/s)\n",
               nranks, keys, nbins, seconds, (double)total / seconds / 1e6);
        int ntop = top_bins(global, nbins, top);
        for (int i = 0; i < ntop; i++)
            printf("  bin %6" PRIu64 ": %8" PRIu64 " keys (%5.2f%%) on rank %d\n", top[i],
                   global[top[i]], 100.0 * (double)global[top[i]] / (double)total,
                   gas_ptr_rank(gas_layout_ptr(&layout, top[i] * sizeof(uint64_t))));
        if (wrong == 0)
            printf("histogram verified: %" PRIu64 " keys across %d ranks\n", total, nranks);
        else
            printf("histogram WRONG: %" PRIu64 " keys counted, %" PRIu64 " expected\n",
                   total, keys * (uint64_t)nranks);
    }

    /* Everyone keeps the array until rank 0 has read it, then frees it. */
    check(gas_barrier(), "gas_barrier");
    check(gas_free(hist), "gas_free");
    free(expected);
    free(global);
    check(gas_finalize(), "gas_finalize");
    return wrong == 0 ? 0 : 1;
}
