/*
 * test_udp_forged_icmp - ICMP "port unreachable" errors that do not quote a
 * datagram this rank sent do not make it declare a live peer dead.
 *
 * The last rank computes outside libgas for QUIET seconds (silent, alive).
 * Meanwhile rank 0 sends itself, through a raw socket, forged ICMP port
 * unreachables from the quiet rank's address, as a process on its host
 * could, quoting 64 bytes "sent" from rank 0's port to the quiet rank's:
 * zeros (not a libgas datagram), and libgas headers of this wire version
 * that each fail one check of the quote: an acknowledgement with another
 * job's key; one with this job's key (GASRUN_JOB_KEY, which any process of
 * the job's user can read) naming another rank as its source; a numbered
 * datagram from rank 0 whose number it never sent.  Before the fix, 1 s of them declared the quiet rank
 * dead (black-box tester T26).  Then a barrier and a check of data from
 * every rank: every call GAS_OK.  Needs root (a raw socket): exit 77
 * (skipped) without it.  GAS_TRANSPORT=udp, GAS_UDP_IFACE=lo.
 */
#include "check.h"
#include "transport/udp/seq.h"
#include "transport/udp/wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { QUIET_US = 3000000, FORGE_US = 2000000 };

static uint16_t csum16(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)(b[i] << 8 | b[i + 1]);
    if (n & 1)
        s += (uint32_t)(b[n - 1] << 8);
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* An IPv4 header of 20 bytes (checksum filled). */
static void ip_header(uint8_t *h, struct in_addr src, struct in_addr dst, uint8_t proto,
                      size_t payload)
{
    memset(h, 0, 20);
    h[0] = 0x45;
    uint16_t total = htons((uint16_t)(20 + payload)), frag = htons(0x4000);
    memcpy(h + 2, &total, 2);
    memcpy(h + 6, &frag, 2);
    h[8] = 64;
    h[9] = proto;
    memcpy(h + 12, &src, 4);
    memcpy(h + 16, &dst, 4);
    uint16_t c = htons(csum16(h, 20));
    memcpy(h + 10, &c, 2);
}

static int parse_ep(const char *ep, struct sockaddr_in *a)
{
    char host[48];
    snprintf(host, sizeof host, "%s", ep);
    char *colon = strrchr(host, ':');
    if (colon == NULL)
        return -1;
    *colon = '\0';
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

/* Forge port unreachables to `me` about datagrams me -> quiet for FORGE_US; how many went. */
static long forge(int fd, const struct sockaddr_in *me, const struct sockaddr_in *quiet)
{
    long sent = 0;
    for (int k = 0; k * 5000 < FORGE_US; k++) {
        uint8_t quoted[64] = {0};
        const char *key = getenv("GASRUN_JOB_KEY");
        if (k % 4 && key) {   /* a libgas header, each rejected by one check of the quote */
            int kind = k % 4;
            quoted[0] = GAS_UDP_VERSION;
            /* 1: another job's key (an acknowledgement, which needs no number in flight);
             * 2: this job's key, an acknowledgement "from" another rank than rank 0;
             * 3: from rank 0 with this job's key, a number it never sent */
            quoted[1] = kind == 3 ? 0 : GAS_UDP_F_NOSEQ;
            gas_udp_st32(quoted + 4, kind == 2 ? (uint32_t)(t_nranks - 1) : 0);
            if (kind == 1)
                memset(quoted + 8, 0x5a, 8);
            else
                gas_udp_st64(quoted + 8, strtoull(key, NULL, 16));
            gas_udp_st32(quoted + 16, GAS_UDP_SEQ_ISN - 100000u);
        }
        uint8_t pkt[20 + 8 + 20 + 8 + sizeof quoted];
        uint8_t *icmp = pkt + 20, *inner = icmp + 8, *udp = inner + 20;
        ip_header(inner, me->sin_addr, quiet->sin_addr, 17, 8 + sizeof quoted);
        uint16_t ulen = htons(8 + sizeof quoted);
        memcpy(udp, &me->sin_port, 2);
        memcpy(udp + 2, &quiet->sin_port, 2);
        memcpy(udp + 4, &ulen, 2);
        memset(udp + 6, 0, 2);
        memcpy(udp + 8, quoted, sizeof quoted);
        memset(icmp, 0, 8);
        icmp[0] = 3;   /* destination unreachable */
        icmp[1] = 3;   /* port unreachable */
        uint16_t c = htons(csum16(icmp, sizeof pkt - 20));
        memcpy(icmp + 2, &c, 2);
        ip_header(pkt, quiet->sin_addr, me->sin_addr, 1, sizeof pkt - 20);
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = me->sin_addr};
        if (sendto(fd, pkt, sizeof pkt, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)sizeof pkt)
            sent++;
        usleep(5000);
    }
    return sent;
}

int main(void)
{
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    if (raw < 0) {
        printf("skipped: no raw socket (needs root)\n");
        return 77;
    }
    test_begin("udp_forged_icmp");
    int me = t_rank, n = t_nranks, quiet = n - 1;
    gas_ptr_t arr;
    MUST(gas_malloc(8 * (uint64_t)n * (uint64_t)n, &arr));
    gas_layout_t L;
    MUST(gas_layout(arr, &L));
    for (int r = 0; r < n; r++) {   /* every pair has talked: channels and addresses known */
        uint64_t v = 1000u * (unsigned)me + (unsigned)r;
        MUST(gas_put(gas_ptr_make(r, L.local_offset + 8 * (uint64_t)me), &v, 8));
    }
    MUST(gas_barrier());
    if (me == quiet) {
        usleep(QUIET_US);   /* computing: no libgas call */
    } else if (me == 0) {
        gas_peer_stats_t mine, theirs;
        struct sockaddr_in a_me, a_quiet;
        MUST(gas_peer_stats(0, &mine));
        MUST(gas_peer_stats(quiet, &theirs));
        if (parse_ep(mine.endpoint, &a_me) < 0 || parse_ep(theirs.endpoint, &a_quiet) < 0)
            test_die("endpoints of rank 0 and the quiet rank");
        long sent = forge(raw, &a_me, &a_quiet);
        test_note("forged %ld ICMP port unreachables about datagrams to rank %d", sent, quiet);
        CHECK(sent > 100, "only %ld forged ICMP errors went out", sent);
    }
    close(raw);
    CHECK_OK(gas_barrier());   /* the quiet rank must not have been declared dead */
    for (int r = 0; r < n; r++) {
        uint64_t v = 0;
        if (CHECK_OK(gas_get(&v, gas_ptr_make(r, L.local_offset + 8 * (uint64_t)me), 8)))
            CHECK(v == 1000u * (unsigned)me + (unsigned)r, "rank %d's word: %llu", r,
                  (unsigned long long)v);
    }
    MUST(gas_barrier());
    MUST(gas_free(arr));
    return test_end();
}
