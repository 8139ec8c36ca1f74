/*
 * gas-bench-scale - what a job costs per rank as it grows: gas_init time,
 * resident memory after init and after contacting every peer, and the
 * per-peer state.
 *
 *   gasrun -n N gas-bench-scale [--header] [--help]
 *
 * Every rank times its gas_init (monotonic clock, from just before the call
 * to its return); rank 0 prints the maximum over the ranks.  Resident memory
 * (VmRSS) is read after init and a barrier, then after one 8-byte gas_get
 * from every other rank (first contact: the route to that peer is made
 * then); the growth divided by the peers contacted is the measured per-peer
 * cost.  The sizes from the code: the route table holds one pointer per
 * rank (allocated at init), and each contacted peer adds its transport's
 * per-peer record.  Prints one markdown table row (--header: the header
 * first).  Reads only the public API, plus the transports' record sizes.
 */
#include <gas.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The per-peer record of each transport (transport/<name>/): internal. */
extern const size_t gas_shm_peer_bytes;
extern const size_t gas_udp_peer_bytes;

/*
 * "shm 48": the path to rank `peer` and its per-peer record in bytes.  An
 * rdma peer first has a udp channel (and its queue pair only once upgraded):
 * the udp record is what every one of them costs.
 */
static void peer_record(int peer, char *buf, size_t cap)
{
    gas_peer_stats_t st;
    if (peer < 0 || gas_peer_stats(peer, &st) != GAS_OK) {
        snprintf(buf, cap, "-");
        return;
    }
    if (strcmp(st.transport, "shm") == 0)
        snprintf(buf, cap, "shm %zu", gas_shm_peer_bytes);
    else if (strcmp(st.transport, "udp") == 0)
        snprintf(buf, cap, "udp %zu", gas_udp_peer_bytes);
    else
        snprintf(buf, cap, "%s: udp %zu, then its QP", st.transport, gas_udp_peer_bytes);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* VmRSS of this process in KiB, or -1. */
static double rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtod(line + 6, NULL);
    fclose(f);
    return kib;
}

static void check(gas_status_t s, const char *call)
{
    if (s != GAS_OK) {
        fprintf(stderr, "gas-bench-scale: %s: %s (%s)\n", call, gas_strerror(s),
                gas_last_error());
        exit(1);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gasrun -n N gas-bench-scale [--header]\n"
            "  one markdown table row: gas_init time (max over the ranks), resident memory\n"
            "  per rank after gas_init and after contacting every peer, per-peer cost\n"
            "  --header  the table's header first\n"
            "  --help    this text\n");
}

/*
 * The options, before gas_init (so a bad one runs nothing): 0 to run,
 * else the exit status (0 for --help, 2 for a bad option).  Under gasrun
 * rank 0 alone speaks.
 */
static int parse_options(int argc, char **argv, int *header_p)
{
    const char *rank = getenv("GASRUN_RANK");
    int speak = rank == NULL || strcmp(rank, "0") == 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--header") == 0) {
            *header_p = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (speak)
                usage(stdout);
            return -1;
        } else {
            if (speak) {
                fprintf(stderr, "gas-bench-scale: unknown option '%s'\n", argv[i]);
                usage(stderr);
            }
            return 2;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int header = 0, rc = parse_options(argc, argv, &header);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    double t0 = now_s();
    check(gas_init(), "gas_init");
    double init_s = now_s() - t0;
    int me = gas_rank(), n = gas_nranks();
    gas_ptr_t word;
    check(gas_malloc(8 * (size_t)n, &word), "gas_malloc");
    check(gas_barrier(), "gas_barrier");
    double rss0 = rss_kib();

    /* first contact with every peer, in an order that differs per rank */
    uint64_t v;
    for (int k = 1; k < n; k++) {
        gas_ptr_t p;
        check(gas_ptr_index(word, 8, (uint64_t)((me + k) % n), &p), "gas_ptr_index");
        check(gas_get(&v, p, sizeof v), "gas_get");
    }
    check(gas_barrier(), "gas_barrier");
    double rss1 = rss_kib();

    /* max of init time; max and mean of both RSS figures */
    double mine[4] = { init_s, rss0, rss1, rss1 - rss0 }, mx[4], sum[4];
    check(gas_allreduce(GAS_TEAM_WORLD, mx, mine, 4, GAS_DOUBLE, GAS_OP_MAX), "gas_allreduce");
    check(gas_allreduce(GAS_TEAM_WORLD, sum, mine, 4, GAS_DOUBLE, GAS_OP_SUM), "gas_allreduce");
    if (me == 0) {
        char rec[64];
        peer_record(n > 1 ? 1 : -1, rec, sizeof rec);
        if (header)
            printf("| ranks | gas_init max (ms) | RSS after init, mean / max (KiB) | "
                   "RSS after contacting all peers, mean / max (KiB) | growth per contacted "
                   "peer (KiB, mean) | route table (B/rank) | per-peer record (B) |\n"
                   "| ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        printf("| %d | %.1f | %.0f / %.0f | %.0f / %.0f | %.2f | %zu | %s |\n", n, mx[0] * 1e3,
               sum[1] / n, mx[1], sum[2] / n, mx[2], n > 1 ? sum[3] / n / (n - 1) : 0.0,
               sizeof(void *), rec);
        fflush(stdout);
    }
    check(gas_free(word), "gas_free");
    check(gas_finalize(), "gas_finalize");
    return 0;
}
