/*
 * test_udp_stray - strangers' datagrams change nothing (2 ranks over udp).
 *
 * Rank 0 learns rank 1's udp endpoint (gas_peer_stats) and, from a socket
 * of its own, sends it garbage: random bytes, well-formed datagrams with a
 * wrong job key that would put into rank 1's memory, the previous wire
 * version, a bad version, truncated and oversize datagrams, and datagrams
 * with the right key (read from GASRUN_JOB_KEY) but a wrong destination, a
 * source outside the job or rank 1 itself, a bad checksum, an
 * acknowledgement of datagrams never sent, and a numbered put far beyond
 * the receive window (the last ones well-formed, but not from rank 0's
 * address).  Meanwhile real puts and gets keep flowing and are checked.  Rank 1's bad-datagram counter must
 * rise by at least what was sent, and its memory outside what rank 0 really
 * wrote must be untouched.
 *
 * Then requests with out-of-segment offsets go through the real channel
 * (the transport's own put/get/atomic slots, below the gas layer's checks):
 * rank 1 refuses them (its `rejected` counter rises) and rank 0 gets
 * GAS_ERR_BOUNDS naming rank 1, from the operation or from gas_quiet.
 */
#include "udp_test.h"
#include "gas/internal.h"
#include "transport/transport.h"
#include "transport/udp/seq.h"
#include "transport/udp/wire.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PART (1u << 20)
#define LEGIT (64u << 10) /* rank 0 really writes [0, LEGIT) of rank 1's part */

static int sock;
static struct sockaddr_in to;
static uint64_t key;
static long sent_bad;

static void send_dgram(const unsigned char *b, size_t len)
{
    if (sendto(sock, b, len, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)len)
        sent_bad++;
}

/* A well-formed datagram putting 16 bytes at off, with the given fields. */
static size_t forge(unsigned char *b, uint64_t k, uint32_t src, uint32_t dst, uint32_t seq,
                    uint32_t ack, uint64_t off)
{
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .key = k, .src = src, .seq = seq,
                            .ack = ack, .cack = ack};
    gas_udp_hdr_write(b, &h);
    struct gas_udp_rec r = {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 16, .off = off};
    unsigned char *d = gas_udp_rec_write(b + GAS_UDP_HDR_LEN, &r);
    memset(d, 0xee, 16);
    size_t len = (size_t)(d - b) + 16;
    gas_udp_dgram_sum_set(b, len, dst);
    return len;
}

static void send_garbage(test_rng_t *r, uint64_t target_off)
{
    unsigned char b[4096];
    const uint32_t isn = GAS_UDP_SEQ_ISN;
    for (int i = 0; i < 40; i++) { /* random bytes */
        size_t len = (size_t)rng_range(r, 1, 1400);
        for (size_t k = 0; k < len; k++)
            b[k] = (unsigned char)rng_next(r);
        send_dgram(b, len);
    }
    for (int i = 0; i < 10; i++) /* another job's key, aimed at rank 1's memory */
        send_dgram(b, forge(b, key ^ (1ull << i), 0, 1, isn + (uint32_t)i, isn, target_off + 16 * (uint64_t)i));
    for (int i = 0; i < 5; i++) {
        size_t len = forge(b, key, 0, 1, isn, isn, target_off);
        b[0] = 1; /* the previous wire version */
        gas_udp_dgram_sum_set(b, len, 1);
        send_dgram(b, len);
        len = forge(b, key, 0, 1, isn, isn, target_off);
        b[0] = 99; /* version */
        gas_udp_dgram_sum_set(b, len, 1);
        send_dgram(b, len);
        send_dgram(b, 30); /* truncated header */
        memset(b, 0, sizeof b); /* oversize: more than GAS_UDP_MTU allows */
        forge(b, key, 0, 1, isn, isn, target_off);
        send_dgram(b, 4000);
        send_dgram(b, forge(b, key, 0, 0, isn, isn, target_off));  /* for another rank */
        send_dgram(b, forge(b, key, 1, 1, isn, isn, target_off));  /* from rank 1 itself */
        send_dgram(b, forge(b, key, 7, 1, isn, isn, target_off));  /* source outside the job */
        len = forge(b, key, 0, 1, isn, isn, target_off);
        b[len - 1] ^= 1; /* checksum no longer matches */
        send_dgram(b, len);
        /* Right key and ranks, but acknowledging what rank 1 never sent. */
        struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ, .key = key,
                                .src = 0, .seq = isn, .ack = isn + 0x40000000u};
        gas_udp_hdr_write(b, &h);
        gas_udp_dgram_sum_set(b, GAS_UDP_ACK_LEN, 1);
        send_dgram(b, GAS_UDP_ACK_LEN);
        /* Right key, a put numbered far beyond the receive window.  These
         * two come from this test's own socket, not rank 0's: rank 1 drops
         * them for their source address (test_udp_chan sends such
         * datagrams from the right address). */
        send_dgram(b, forge(b, key, 0, 1, isn + 0x40000000u, isn - 1, target_off));
    }
}

static void legit_traffic(test_rng_t *r, gas_ptr_t part1)
{
    uint8_t buf[4096], back[4096];
    for (int i = 0; i < 50; i++) {
        size_t len = (size_t)rng_range(r, 1, sizeof buf);
        uint64_t off = rng_below(r, LEGIT - len + 1);
        pattern_fill(buf, len, 0, i, off);
        CHECK_OK(gas_put(test_at(part1, off), buf, len));
        CHECK_OK(gas_get(back, test_at(part1, off), len));
        check_bytes("legit traffic", back, buf, len, off);
    }
}

/* Requests outside rank 1's segment, below the gas layer's checks. */
static void out_of_segment(void)
{
    gas_tl_peer_t *peer;
    MUST(gas_tl_peer(1, &peer));
    uint64_t beyond = peer->size - 8, buf[8] = {0}, res = 0;
    gas_tl_comp_t c = {.pending = 1};
    gas_status_t st = gas_tl_put(peer, beyond, buf, sizeof buf, &c, "out_of_segment");
    CHECK(st == GAS_INPROGRESS, "put went out (%d)", (int)st);
    CHECK_STATUS(gas_gs_comp_wait(&c, "out_of_segment"), GAS_ERR_BOUNDS);
    CHECK(strstr(gas_last_error(), "rank 1"), "names rank 1: \"%s\"", gas_last_error());
    gas_tl_comp_t g = {.pending = 1};
    st = gas_tl_get(peer, buf, UINT64_MAX - 16, 32, &g, "out_of_segment");
    CHECK(st == GAS_INPROGRESS, "get went out (%d)", (int)st);
    CHECK_STATUS(gas_gs_comp_wait(&g, "out_of_segment"), GAS_ERR_BOUNDS);
    gas_tl_comp_t a = {.pending = 1};
    gas_tl_amo_t amo = {.op = GAS_AMO_FETCH_ADD, .width = 8, .offset = 1ull << 62, .operand = 1,
                        .result = &res};
    st = gas_tl_amo(peer, &amo, &a, "out_of_segment");
    CHECK(st == GAS_INPROGRESS, "atomic went out (%d)", (int)st);
    CHECK_STATUS(gas_gs_comp_wait(&a, "out_of_segment"), GAS_ERR_BOUNDS);
    /* Without a completion of its own, the refusal comes back from gas_quiet. */
    st = gas_tl_put(peer, 16, buf, 8, NULL, "out_of_segment"); /* the segment header page */
    CHECK(st == GAS_INPROGRESS, "header put went out (%d)", (int)st);
    CHECK_STATUS(gas_quiet(), GAS_ERR_BOUNDS);
    CHECK(strstr(gas_last_error(), "rank 1 refused"), "quiet names rank 1: \"%s\"", gas_last_error());
    CHECK_OK(gas_quiet());
}

int main(void)
{
    test_begin("udp_stray");
    gas_peer_stats_t st;
    if (udp_test_skip(2, 1, 1 - t_rank, &st))
        return 77;
    const char *k = getenv("GASRUN_JOB_KEY");
    key = k ? strtoull(k, NULL, 16) : 0;
    gas_ptr_t arr, ctl;
    MUST(gas_malloc_dist(2, PART, GAS_DIST_BLOCK, 0, &arr));
    MUST(gas_malloc(2 * sizeof(uint64_t), &ctl));
    gas_ptr_t part1 = test_at(arr, PART), sent_at1 = test_at(ctl, 8);
    gas_peer_stats_t before;
    if (t_rank == 1) {
        pattern_fill(gas_ptr_local(part1), PART, 1, 1, 0);
        MUST(gas_peer_stats(1, &before));
    }
    MUST(gas_barrier());
    if (t_rank == 0) {
        char ip[64];
        snprintf(ip, sizeof ip, "%s", st.endpoint);
        char *colon = strrchr(ip, ':');
        CHECK(colon != NULL, "endpoint \"%s\"", st.endpoint);
        *colon = '\0';
        to = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
        inet_pton(AF_INET, ip, &to.sin_addr);
        sock = socket(AF_INET, SOCK_DGRAM, 0);
        test_rng_t r = rng_make(0, 5);
        uint64_t target = gas_ptr_offset(part1) + LEGIT; /* rank 1's memory rank 0 never writes */
        for (int round = 0; round < 3; round++) {
            legit_traffic(&r, part1);
            send_garbage(&r, target);
        }
        legit_traffic(&r, part1);
        close(sock);
        uint64_t n = (uint64_t)sent_bad;
        MUST(gas_put(sent_at1, &n, 8));
        test_note("sent %ld bad datagrams to rank 1 at %s", sent_bad, st.endpoint);
        out_of_segment();
    }
    MUST(gas_barrier());
    if (t_rank == 1) {
        uint64_t n = *(uint64_t *)gas_ptr_local(sent_at1);
        gas_peer_stats_t after;
        for (int i = 0; i < 500; i++) { /* the progress thread may still be dropping them */
            MUST(gas_peer_stats(1, &after));
            if (after.bad_datagrams - before.bad_datagrams >= n)
                break;
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        CHECK(after.bad_datagrams - before.bad_datagrams >= n,
              "%" PRIu64 " bad datagrams counted, %" PRIu64 " sent", after.bad_datagrams - before.bad_datagrams, n);
        CHECK(after.rejected - before.rejected == 4, "%" PRIu64 " requests refused, expected 4",
              after.rejected - before.rejected);
        const uint8_t *mem = gas_ptr_local(part1);
        check_pattern("rank 1's memory outside what rank 0 wrote", mem + LEGIT, PART - LEGIT, 1, 1,
                      LEGIT, LEGIT);
        test_note("counted %" PRIu64 " bad datagrams (%" PRIu64 " sent), refused %" PRIu64 " requests",
                  after.bad_datagrams - before.bad_datagrams, n, after.rejected - before.rejected);
    }
    return test_end();
}
