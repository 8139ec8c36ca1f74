/*
 * The udp channel, driven through real loopback sockets with this test
 * playing the peer (rank 1): the transport (rank 0, GAS_PROGRESS=poll, so
 * nothing runs unless the test calls progress) sends datagrams to the test's
 * socket, and the test answers with datagrams it builds with the wire API.
 *
 *  - sending: sequence numbers, window accounting, cumulative + selective
 *    acks, fast retransmit of the holes, Karn's rule (no RTT sample from a
 *    retransmitted datagram), the completion point;
 *  - timeout: the oldest datagram resent with back-off; the next ack tells
 *    a false alarm (window restored) from a loss (the rest resent), and a
 *    duplicate report of the resent one undoes the cut too; the tail-loss
 *    probe resends the newest datagram once, window untouched; a loss
 *    shrinks the window by 15% when the recent loss rate is low, by half
 *    when it is high;
 *  - receiving: in-order application with early datagrams held and
 *    duplicates dropped (atomics applied exactly once), immediate acks with
 *    selective bits for a gap, across the sequence-number wrap;
 *  - the target's bounds checks: refused requests leave memory untouched and
 *    are answered with ERR records;
 *  - continuation records: applied in stream order, refused past the
 *    segment, dropped when they continue nothing; datagrams from another
 *    address than the peer published, acks of what was never sent and
 *    datagrams beyond the window dropped and counted;
 *  - request/reply: a get and a fetching atomic completed by crafted replies;
 *  - a channel that only answers: its first answer asks for an immediate
 *    acknowledgement and times a round trip, an acknowledgement of new data
 *    ends a back-off (Karn) with or without a sample, and a lost answer is
 *    sent again by a tail-loss probe, not after the (backed-off) timeout;
 *  - an MTU black hole: a peer that acknowledged small datagrams and never
 *    the full-size ones is declared dead with a reason that says so.
 */
#include "transport/udp/udp.h"
#include "alloc/segment.h"
#include "runtime/boot_wire.h"
#include "runtime/clock.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "unit.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY 0x5eed5eed12345678ull
#define SEG (1u << 20)

extern const struct gas_tl_ops gas_udp_ops;

static int psock;                  /* the test's socket: "rank 1" */
static struct sockaddr_in paddr;
static struct gas_udp_chan *ch;    /* rank 0's channel to rank 1 */
static char *seg;
static uint32_t peer_seq = GAS_UDP_SEQ_ISN; /* the test's own stream to rank 0 */
static uint32_t peer_rx = GAS_UDP_SEQ_ISN;  /* next of rank 0's stream the test expects */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void pump(void)
{
    for (int i = 0; i < 8; i++)
        gas_udp_progress();
}

/* The next datagram rank 0 sent to the test (0 length when none within ms). */
static size_t take(unsigned char *buf, struct gas_udp_hdr *h, int ms)
{
    struct pollfd p = {.fd = psock, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return 0;
    ssize_t n = recv(psock, buf, 65536, 0);
    const char *why = "";
    UCHECK(n > 0 && gas_udp_dgram_check(buf, (size_t)n, KEY, 1, 2, h, &why) == 0,
           "rank 0 sent a bad datagram: %s", why);
    return n > 0 ? (size_t)n : 0;
}

static void drain(void)
{
    unsigned char b[65536];
    struct gas_udp_hdr h;
    while (take(b, &h, 0))
        ;
}

static void send_raw(const unsigned char *b, size_t len)
{
    UCHECK(sendto(psock, b, len, 0, (const struct sockaddr *)&gas_udp_g.self, sizeof gas_udp_g.self) ==
               (ssize_t)len, "sendto");
}

/* A standalone ack from the test: ack/sack of rank 0's stream, dsack, cack. */
static void send_ack(uint32_t ack, uint64_t sack, uint16_t dsack, uint32_t cack)
{
    unsigned char b[GAS_UDP_ACK_LEN];
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ, .dsack = dsack,
                            .key = KEY, .src = 1, .seq = peer_seq, .ack = ack, .sack = sack,
                            .cack = cack};
    gas_udp_hdr_write(b, &h);
    gas_udp_dgram_sum_set(b, sizeof b, 0);
    send_raw(b, sizeof b);
}

/* A numbered datagram from the test with the given records (data from `data`). */
static size_t build(unsigned char *b, uint32_t seq, const struct gas_udp_rec *r, int n,
                    const void *data)
{
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .key = KEY, .src = 1, .seq = seq,
                            .ack = peer_rx, .cack = peer_rx};
    gas_udp_hdr_write(b, &h);
    size_t len = GAS_UDP_HDR_LEN;
    for (int i = 0; i < n; i++) {
        unsigned char *d = gas_udp_rec_write(b + len, &r[i]);
        for (size_t k = 0; k < r[i].dlen; k++)
            d[k] = ((const unsigned char *)data)[k];
        len = (size_t)(d - b) + r[i].dlen;
    }
    gas_udp_dgram_sum_set(b, len, 0);
    return len;
}

static struct gas_udp_slot *slot(uint32_t seq)
{
    return &ch->ring[seq & (ch->ring_cap - 1)];
}

static void sending(void)
{
    const uint32_t isn = GAS_UDP_SEQ_ISN;
    /* The first piece is a PUT record naming the put's range (16 bytes
     * more), the other nine 4-byte continuations. */
    size_t first = gas_udp_g.cfg.dgram_max - GAS_UDP_HDR_LEN - GAS_UDP_REC_LEN - 16;
    size_t payload = gas_udp_g.cfg.dgram_max - GAS_UDP_HDR_LEN - GAS_UDP_CONT_LEN;
    size_t n = first + 9 * payload;
    unsigned char *src = malloc(n), buf[65536];
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 13);
    UCHECK(gas_udp_ops.put(&ch->base, 8192, src, n, NULL, "test") == GAS_INPROGRESS, "put in progress");
    struct gas_udp_hdr h;
    struct gas_udp_cont cont = {0};
    uint64_t off = 8192;
    for (uint32_t i = 0; i < 10; i++) {
        size_t len = take(buf, &h, 1000);
        UCHECK(len == gas_udp_g.cfg.dgram_max && h.seq == isn + i, "datagram %u: len %zu seq %#x", i,
               len, h.seq);
        size_t pos = GAS_UDP_HDR_LEN, k = i ? payload : first;
        struct gas_udp_rec r;
        UCHECK(gas_udp_rec_next(buf, len, &pos, &r) &&
                   r.type == (i ? GAS_UDP_R_CONT : GAS_UDP_R_PUT), "datagram %u: record type %u", i,
               r.type);
        UCHECK(gas_udp_cont_step(&cont, &r) && r.type == GAS_UDP_R_PUT && r.off == off &&
                   r.dlen == k && memcmp(r.data, src + (off - 8192), k) == 0 &&
                   r.pos == off - 8192 && r.total == n,
               "datagram %u carries the right piece", i);
        UCHECK(((r.flags & GAS_UDP_RF_FINAL) != 0) == (i == 9), "FINAL only on the last piece");
        UCHECK(((h.flags & GAS_UDP_F_ACKREQ) != 0) == (i == 9), "ACKREQ ends the burst");
        off += k;
    }
    UCHECK(ch->next_seq == isn + 10 && ch->snd_nxt == isn + 10 && ch->una == isn, "10 in flight");
    UCHECK(ch->inflight == 10ull * gas_udp_g.cfg.dgram_max, "inflight %llu",
           (unsigned long long)ch->inflight);
    /* Cumulative ack of 5; 7, 8, 9 acknowledged selectively: 5 and 6 are holes. */
    sleep_ms(2);
    send_ack(isn + 5, 0xe, 0, isn + 5);
    pump();
    UCHECK(ch->una == isn + 5, "una %#x", ch->una);
    UCHECK(slot(isn + 7)->state == SLOT_SACKED && slot(isn + 9)->state == SLOT_SACKED, "sacked");
    UCHECK(ch->rtt.srtt >= 1000000, "an RTT sample from datagrams sent once: %llu ns",
           (unsigned long long)ch->rtt.srtt);
    UCHECK(atomic_load(&ch->cacked) == isn + 5, "completion point");
    /* Three later datagrams arrived: 5 and 6 are lost and sent again. */
    uint32_t resent[2] = {0, 0};
    int nres = 0;
    size_t len;
    while (nres < 2 && (len = take(buf, &h, 1000)) != 0)
        if (h.seq == isn + 5 || h.seq == isn + 6) {
            UCHECK(h.flags & GAS_UDP_F_RETX, "retransmission flagged");
            resent[nres++] = h.seq;
        }
    UCHECK(nres == 2 && resent[0] == isn + 5 && resent[1] == isn + 6, "holes resent (%d)", nres);
    UCHECK(ch->c.retx == 2 && ch->in_recovery, "2 retransmits (%llu), in recovery",
           (unsigned long long)ch->c.retx);
    /* Karn: acknowledging the resent ones gives no RTT sample. */
    uint64_t srtt = ch->rtt.srtt;
    sleep_ms(20);
    send_ack(isn + 10, 0, 0, isn + 10);
    pump();
    UCHECK(ch->una == isn + 10 && ch->inflight == 0, "all acknowledged");
    UCHECK(ch->rtt.srtt == srtt, "no sample from retransmitted datagrams (%llu vs %llu)",
           (unsigned long long)ch->rtt.srtt, (unsigned long long)srtt);
    UCHECK(atomic_load(&ch->cacked) == isn + 10, "complete");
    UCHECK(!ch->in_recovery, "recovery over");
    peer_rx = isn + 10;
    free(src);
}

/* A put of 3 datagrams, all taken; then a timeout: the oldest alone is resent. */
static uint32_t put3_and_time_out(uint64_t *rto_p, uint64_t *cwnd_p)
{
    unsigned char src[3000], buf[65536];
    struct gas_udp_hdr h;
    memset(src, 7, sizeof src);
    uint32_t first = ch->next_seq;
    UCHECK(gas_udp_ops.put(&ch->base, 4096, src, sizeof src, NULL, "test") == GAS_INPROGRESS, "put");
    int got = 0;
    while (take(buf, &h, 100))
        got++;
    UCHECK(got == 3, "3 datagrams (%d)", got);
    *rto_p = gas_udp_rtt_timeout(&ch->rtt);
    *cwnd_p = ch->cwnd;
    sleep_ms((int)(*rto_p / 1000000) + 5);
    pump();
    got = 0;
    while (take(buf, &h, 100)) {
        UCHECK((h.flags & GAS_UDP_F_RETX) && h.seq == first, "the oldest resent (%#x)", h.seq);
        got++;
    }
    UCHECK(got == 1, "only the oldest resent after the timeout (%d)", got);
    UCHECK(ch->cwnd == ch->cwnd_min && ch->frto, "window at its floor, the verdict pending");
    return first;
}

/*
 * Timeouts (F-RTO): the oldest datagram is resent and the next ack decides.
 * Acknowledging the others too shows they were not lost: the window comes
 * back.  Acknowledging only the resent one: the others are lost and resent.
 * A duplicate report (dsack) of the resent one also undoes the cut.
 */
static void timeout(void)
{
    unsigned char buf[65536];
    struct gas_udp_hdr h;
    uint64_t rto, cwnd;
    uint32_t first = put3_and_time_out(&rto, &cwnd);
    UCHECK(ch->rtt.backoff == 1 && gas_udp_rtt_timeout(&ch->rtt) == 2 * rto, "backed off");
    send_ack(first + 3, 0, 0, first + 3);
    pump();
    UCHECK(ch->cwnd >= cwnd && !ch->frto, "false alarm: window restored (%llu, was %llu)",
           (unsigned long long)ch->cwnd, (unsigned long long)cwnd);
    UCHECK(ch->c.spurious == 1, "one needless timeout recorded");
    UCHECK(ch->una == first + 3 && atomic_load(&ch->cacked) == first + 3, "acknowledged");
    peer_rx = first + 3;
    drain();

    uint64_t retx = ch->c.retx;
    first = put3_and_time_out(&rto, &cwnd);
    send_ack(first + 1, 0, 0, first + 1); /* only the resent one arrived */
    pump();
    int got = 0;
    while (take(buf, &h, 100)) {
        UCHECK((h.flags & GAS_UDP_F_RETX) && (h.seq == first + 1 || h.seq == first + 2),
               "a lost one resent (%#x)", h.seq);
        got++;
    }
    UCHECK(got == 2 && ch->c.retx == retx + 3, "a real loss: the other two resent (%d)", got);
    UCHECK(ch->cwnd < cwnd && ch->c.spurious == 1 && !ch->frto, "the window stays cut");
    send_ack(first + 3, 0, 0, first + 3);
    pump();
    drain();

    first = put3_and_time_out(&rto, &cwnd);
    send_ack(first + 1, 0, 1, first + 1); /* first arrived twice: its ack was late */
    pump();
    UCHECK(ch->cwnd >= cwnd && ch->c.spurious == 2, "dsack: window restored (%llu, was %llu)",
           (unsigned long long)ch->cwnd, (unsigned long long)cwnd);
    got = 0;
    while (take(buf, &h, 100))
        got++;
    UCHECK(got == 0, "nothing else resent (%d)", got);
    send_ack(first + 3, 0, 0, first + 3);
    pump();
    UCHECK(ch->una == first + 3 && atomic_load(&ch->cacked) == first + 3, "acknowledged");
    peer_rx = first + 3;
    drain();
}

/*
 * Tail-loss probe: with the round trip set to 1 ms and the timeout to
 * 250 ms, a flight that nobody acknowledges gets its newest datagram sent
 * again (asking for an acknowledgement) long before the timeout, once, and
 * without touching the window.
 */
static void tail_probe(void)
{
    unsigned char src[3000], buf[65536];
    struct gas_udp_hdr h;
    memset(src, 9, sizeof src);
    ch->rtt.srtt = 1000000;
    ch->rtt.rttvar = 0;
    ch->rtt.rto = ch->rtt.max;
    ch->rtt.backoff = 0;
    uint32_t first = ch->next_seq;
    uint64_t retx = ch->c.retx;
    UCHECK(gas_udp_ops.put(&ch->base, 4096, src, sizeof src, NULL, "test") == GAS_INPROGRESS, "put");
    int got = 0;
    while (take(buf, &h, 100))
        got++;
    UCHECK(got == 3, "3 datagrams (%d)", got);
    uint64_t cwnd = ch->cwnd;
    sleep_ms(20);
    pump();
    got = 0;
    while (take(buf, &h, 100)) {
        UCHECK(h.seq == first + 2 && (h.flags & GAS_UDP_F_RETX) && (h.flags & GAS_UDP_F_ACKREQ),
               "the newest resent, asking for an ack (%#x, flags %#x)", h.seq, h.flags);
        got++;
    }
    UCHECK(got == 1 && ch->c.retx == retx + 1, "one probe (%d)", got);
    UCHECK(ch->cwnd == cwnd && !ch->frto && !ch->in_recovery, "the window untouched");
    sleep_ms(20);
    pump();
    UCHECK(take(buf, &h, 50) == 0, "one probe per flight");
    send_ack(first + 3, 0, 1, first + 3); /* the probe arrived twice */
    pump();
    UCHECK(ch->una == first + 3 && ch->inflight == 0 && !ch->tlp_out, "acknowledged");
    peer_rx = first + 3;
    drain();
}

/* Ten datagrams in flight; the peer acknowledges all but the fourth: it is
 * lost.  The window (in congestion avoidance, w datagrams) afterwards. */
static double lose_one(uint64_t w)
{
    unsigned char buf[65536];
    struct gas_udp_hdr h;
    uint64_t dg = gas_udp_g.cfg.dgram_max;
    ch->cwnd = ch->ssthresh = w * dg;
    ch->in_recovery = 0;
    uint32_t first = ch->next_seq;
    size_t n = 10 * (dg - GAS_UDP_HDR_LEN - GAS_UDP_CONT_LEN);
    unsigned char *src = calloc(1, n);
    UCHECK(gas_udp_ops.put(&ch->base, 8192, src, n, NULL, "test") == GAS_INPROGRESS, "put");
    while (take(buf, &h, 100))
        ;
    UCHECK(ch->snd_nxt == first + 10, "10 out (%u)", ch->snd_nxt - first);
    send_ack(first + 3, 0x3f, 0, first + 3); /* 3 arrived, then a gap, then 6 */
    pump();
    double after = (double)ch->cwnd / (double)dg;
    UCHECK(ch->in_recovery && slot(first + 3)->state != SLOT_SACKED, "the fourth taken for lost");
    while (take(buf, &h, 100))
        ;
    send_ack(first + 10, 0, 0, first + 10);
    pump();
    peer_rx = ch->rx.next;
    drain();
    free(src);
    return after;
}

/*
 * The response to a loss depends on the recent loss rate: with little loss
 * (random loss on a lossy link) the window shrinks by 15%; when much was
 * lost lately (a queue that overflows) it halves.
 */
static void loss_response(void)
{
    ch->loss_avg = 0;
    double w = lose_one(100);
    UCHECK(w >= 84 && w <= 100 * 0.85 + 9, "little loss lately: 15%% off (%.1f of 100)", w);
    ch->loss_avg = 65536 / 10; /* 10% */
    w = lose_one(100);
    UCHECK(w >= 49 && w <= 50 + 9, "much loss lately: halved (%.1f of 100)", w);
    ch->loss_avg = 0;
}

/* Datagrams from the test, each adding 1 to a counter (non-fetching atomic). */
static size_t add_one(unsigned char *b, uint32_t seq)
{
    struct gas_udp_rec r = {.type = GAS_UDP_R_AMO, .off = 4096 + 64, .a = 1, .amo_op = GAS_AMO_ADD,
                            .amo_width = 8};
    return build(b, seq, &r, 1, NULL);
}

static void receiving(void)
{
    unsigned char d[3][256], buf[65536];
    size_t l[3];
    struct gas_udp_hdr h;
    uint64_t *counter = (uint64_t *)(void *)(seg + 4096 + 64);
    uint32_t s0 = peer_seq;
    for (int i = 0; i < 3; i++)
        l[i] = add_one(d[i], s0 + (uint32_t)i);
    send_raw(d[0], l[0]);
    pump();
    UCHECK(*counter == 1, "first applied");
    send_raw(d[2], l[2]); /* early: held, and an immediate ack shows the gap */
    pump();
    UCHECK(*counter == 1, "early one held, not applied");
    size_t len;
    int acked = 0;
    while ((len = take(buf, &h, 100)) != 0)
        if (h.ack == s0 + 1 && (h.sack & 1))
            acked = 1;
    UCHECK(acked, "ack of %#x with a selective bit for %#x", s0 + 1, s0 + 2);
    send_raw(d[0], l[0]); /* duplicate */
    pump();
    UCHECK(*counter == 1 && ch->c.dup == 1, "duplicate dropped (dups %llu)",
           (unsigned long long)ch->c.dup);
    send_raw(d[1], l[1]); /* fills the gap: 1 and 2 applied, in order */
    pump();
    UCHECK(*counter == 3, "gap filled: %llu", (unsigned long long)*counter);
    send_raw(d[2], l[2]);
    pump();
    UCHECK(*counter == 3 && ch->c.dup == 2, "second duplicate dropped");
    acked = 0;
    while ((len = take(buf, &h, 100)) != 0)
        if (h.ack == s0 + 3)
            acked = 1;
    UCHECK(acked, "everything acknowledged");
    /* Across the wrap: 5000 more, every tenth sent twice and pairs swapped. */
    uint32_t s = s0 + 3;
    for (uint32_t i = 0; i < 5000; i += 2) {
        size_t la = add_one(d[0], s + i), lb = add_one(d[1], s + i + 1);
        send_raw(d[1], lb);
        send_raw(d[0], la);
        if (i % 10 == 0)
            send_raw(d[0], la);
        if (i % 32 == 0) {
            pump();
            drain();
        }
    }
    pump();
    drain();
    peer_seq = s + 5000;
    UCHECK(*counter == 5003, "every one applied exactly once: %llu", (unsigned long long)*counter);
    UCHECK(ch->rx.next == peer_seq && gas_udp_seq_lt(s0, 0) && ch->rx.next < s0,
           "the stream wrapped (next %#x)", ch->rx.next);
}

static void bounds(void)
{
    unsigned char b[512], buf[65536];
    uint64_t before = ch->c.rejected;
    memset(seg + SEG - 64, 0x5a, 64);
    static const unsigned char data[100] = {1};
    struct gas_udp_rec r[] = {
        {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 100, .op = 0, .off = SEG - 4},
        {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 8, .op = 0, .off = 8},
        {.type = GAS_UDP_R_AMO, .op = 0x10001, .off = 1ull << 63, .a = 1, .amo_op = GAS_AMO_ADD, .amo_width = 8},
        {.type = GAS_UDP_R_AMO, .op = 0x10002, .off = 4100, .a = 1, .amo_op = GAS_AMO_ADD, .amo_width = 8},
        {.type = GAS_UDP_R_GET, .op = 0x10003, .off = UINT64_MAX - 8, .a = 64, .b = 0},
        {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL, .dlen = 0, .op = 0,
         .off = 8192, .a = SEG, .b = 1},
    };
    size_t l = build(b, peer_seq++, r, 6, data);
    send_raw(b, l);
    pump();
    UCHECK(ch->c.rejected == before + 6, "6 refused (%llu)", (unsigned long long)(ch->c.rejected - before));
    int same = 1;
    for (int i = 0; i < 64; i++)
        same &= seg[SEG - 64 + i] == 0x5a;
    UCHECK(same, "nothing written near the end");
    UCHECK(gas_al_seg_hdr(seg)->magic == 0, "header page untouched");
    int errs = 0, bounds_errs = 0, align_errs = 0;
    size_t len;
    struct gas_udp_hdr h;
    while ((len = take(buf, &h, 200)) != 0) {
        size_t pos = GAS_UDP_HDR_LEN;
        struct gas_udp_rec e;
        if (h.flags & GAS_UDP_F_NOSEQ)
            continue;
        peer_rx = h.seq + 1;
        while (gas_udp_rec_next(buf, len, &pos, &e)) {
            errs += e.type == GAS_UDP_R_ERR;
            bounds_errs += e.type == GAS_UDP_R_ERR && (int64_t)e.a == GAS_ERR_BOUNDS;
            align_errs += e.type == GAS_UDP_R_ERR && (int64_t)e.a == GAS_ERR_ALIGN;
        }
    }
    UCHECK(errs == 6 && bounds_errs == 5 && align_errs == 1, "ERR answers: %d (%d bounds, %d align)",
           errs, bounds_errs, align_errs);
    send_ack(peer_rx, 0, 0, peer_rx);
    pump();
}

/* Rank 0's answers to the test's last datagrams: ERR records counted, acknowledged. */
static int take_errs(void)
{
    unsigned char buf[65536];
    struct gas_udp_hdr h;
    size_t len;
    int errs = 0;
    while ((len = take(buf, &h, 200)) != 0) {
        if (h.flags & GAS_UDP_F_NOSEQ)
            continue;
        peer_rx = h.seq + 1;
        size_t pos = GAS_UDP_HDR_LEN;
        struct gas_udp_rec e;
        while (gas_udp_rec_next(buf, len, &pos, &e))
            errs += e.type == GAS_UDP_R_ERR;
    }
    send_ack(peer_rx, 0, 0, peer_rx);
    pump();
    return errs;
}

/*
 * Continuation records through the real receive path, and datagrams that
 * pass the wire checks but not the channel's: a continuation of nothing is
 * dropped and counted; a put whose whole range (named by its first piece)
 * runs past the segment, or starts in the header page and runs into valid
 * memory, is refused whole, with one refusal and no piece written; a put cut in
 * three pieces arriving out of order is applied whole; an acknowledgement
 * of datagrams never sent, a datagram beyond the receive window and one
 * from another address than rank 1 published are dropped and counted.
 */
static void continuations(void)
{
    unsigned char b[4096];
    unsigned char data[3000];
    for (int i = 0; i < 3000; i++)
        data[i] = (unsigned char)(i * 11 + 1);
    memset(seg + SEG - 200, 0x5a, 200);
    uint64_t bad = ch->c.bad, rejected = ch->c.rejected;
    /* A DONE, then a continuation in the next datagram: it continues nothing. */
    struct gas_udp_rec r[3] = {{.type = GAS_UDP_R_DONE, .op = 0x4444}};
    send_raw(b, build(b, peer_seq++, r, 1, NULL));
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 100};
    send_raw(b, build(b, peer_seq++, r, 1, data));
    pump();
    UCHECK(ch->c.bad == bad + 2 && ch->rx.next == peer_seq,
           "the stray answer and the continuation of nothing counted (%llu), both delivered",
           (unsigned long long)(ch->c.bad - bad));
    /* A put whose first piece fits but whose whole range runs past the end:
     * refused whole, its first piece unwritten, one refusal. */
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_WHOLE, .dlen = 100,
                                .off = SEG - 200, .total = 250};
    send_raw(b, build(b, peer_seq++, r, 1, data));
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 150};
    send_raw(b, build(b, peer_seq++, r, 1, data + 100));
    pump();
    int untouched = 1;
    for (int i = 0; i < 200; i++)
        untouched &= (unsigned char)seg[SEG - 200 + i] == 0x5a;
    UCHECK(untouched && ch->c.rejected == rejected + 1, "the put past the end refused whole (%llu)",
           (unsigned long long)(ch->c.rejected - rejected));
    UCHECK(take_errs() == 1, "its refusal went back, once");
    /* The other way: a first piece in the header page, the rest valid. */
    memset(seg + 4096, 0x5a, 2000);
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_WHOLE, .dlen = 1000,
                                .off = 4000, .total = 3000};
    send_raw(b, build(b, peer_seq++, r, 1, data));
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .dlen = 1000};
    send_raw(b, build(b, peer_seq++, r, 1, data + 1000));
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 1000};
    send_raw(b, build(b, peer_seq++, r, 1, data + 2000));
    pump();
    for (int i = 0; i < 2000; i++)
        untouched &= (unsigned char)seg[4096 + i] == 0x5a;
    UCHECK(untouched && ch->c.rejected == rejected + 2,
           "a put from the header page into valid memory: no piece written (%llu)",
           (unsigned long long)(ch->c.rejected - rejected));
    UCHECK(take_errs() == 1, "one refusal for the whole put");
    /* A put in three pieces, the datagrams arriving last, first, middle. */
    memset(seg + 40000, 0, 3000);
    struct gas_udp_rec p0 = {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_WHOLE, .dlen = 1000,
                             .op = 0, .off = 40000, .total = 3000};
    struct gas_udp_rec p1 = {.type = GAS_UDP_R_CONT, .dlen = 1000};
    struct gas_udp_rec p2 = {.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 1000};
    size_t l0, l1, l2;
    unsigned char d0[1200], d1[1200], d2[1200];
    l0 = build(d0, peer_seq, &p0, 1, data);
    l1 = build(d1, peer_seq + 1, &p1, 1, data + 1000);
    l2 = build(d2, peer_seq + 2, &p2, 1, data + 2000);
    peer_seq += 3;
    send_raw(d2, l2);
    send_raw(d0, l0);
    pump();
    UCHECK(memcmp(seg + 40000, data, 1000) == 0 && seg[41000] == 0, "first piece only");
    send_raw(d1, l1);
    pump();
    UCHECK(memcmp(seg + 40000, data, 3000) == 0, "all three pieces, in place");
    /* Right address, but an ack of what rank 0 never sent; a datagram beyond the window. */
    bad = ch->c.bad;
    send_ack(ch->next_seq + 1000, 0, 0, ch->next_seq);
    r[0] = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 8,
                                .off = 40000};
    send_raw(b, build(b, peer_seq + 0x1000000u, r, 1, data + 8));
    pump();
    UCHECK(ch->c.bad == bad + 2 && memcmp(seg + 40000, data, 8) == 0,
           "never-sent ack and out-of-window datagram dropped (%llu)",
           (unsigned long long)(ch->c.bad - bad));
    /* A well-formed next datagram, from another socket than rank 1 published. */
    int other = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in oa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    UCHECK(bind(other, (struct sockaddr *)&oa, sizeof oa) == 0, "second socket");
    size_t l = build(b, peer_seq, r, 1, data + 8);
    UCHECK(sendto(other, b, l, 0, (const struct sockaddr *)&gas_udp_g.self, sizeof gas_udp_g.self) ==
               (ssize_t)l, "sendto");
    close(other);
    sleep_ms(5);
    pump();
    UCHECK(ch->c.bad == bad + 3 && ch->rx.next == peer_seq && memcmp(seg + 40000, data, 8) == 0,
           "a datagram from another address dropped (bad %llu, next %#x)",
           (unsigned long long)(ch->c.bad - bad), ch->rx.next);
    /* The next datagram from rank 1's address, with a header-only checksum:
     * rank 1 is on another host (node 2), where only a full sum is taken. */
    l = build(b, peer_seq, r, 1, data + 8);
    gas_udp_dgram_hsum_set(b, l, 0);
    send_raw(b, l);
    pump();
    UCHECK(ch->c.bad == bad + 4 && ch->rx.next == peer_seq && memcmp(seg + 40000, data, 8) == 0,
           "a header-only checksum from another host dropped (bad %llu, next %#x)",
           (unsigned long long)(ch->c.bad - bad), ch->rx.next);
    take_errs();
}

static void request_reply(void)
{
    unsigned char buf[65536], b[4096];
    struct gas_udp_hdr h;
    gas_tl_comp_t comp = {.pending = 1};
    char dst[3000];
    memset(dst, 0, sizeof dst);
    UCHECK(gas_udp_ops.get(&ch->base, dst, 65536, sizeof dst, &comp, "test") == GAS_INPROGRESS, "get");
    pump(); /* a waiting caller's progress flushes a corked request */
    size_t len = take(buf, &h, 1000);
    size_t pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    UCHECK(len && gas_udp_rec_next(buf, len, &pos, &r) && r.type == GAS_UDP_R_GET && r.off == 65536 &&
               r.a == sizeof dst && r.b == 0, "GET request");
    peer_rx = h.seq + 1;
    uint32_t op = r.op;
    char data[3000];
    for (int i = 0; i < 3000; i++)
        data[i] = (char)(i * 7);
    /* Three pieces (a GET_REPLY, then continuations), out of order, the middle one twice. */
    static const int order[4] = {2, 0, 1, 1};
    size_t l;
    for (int i = 0; i < 4; i++) {
        int k = order[i];
        struct gas_udp_rec a = {.type = k ? GAS_UDP_R_CONT : GAS_UDP_R_GET_REPLY, .dlen = 1000,
                                .op = op};
        l = build(b, peer_seq + (uint32_t)k, &a, 1, data + 1000 * k);
        send_raw(b, l);
    }
    peer_seq += 3;
    pump();
    UCHECK(atomic_load(&comp.pending) == 0 && atomic_load(&comp.status) == GAS_OK,
           "get complete (rx.next %#x, peer_seq %#x, bad %llu, dup %llu)", ch->rx.next, peer_seq,
           (unsigned long long)ch->c.bad, (unsigned long long)ch->c.dup);
    UCHECK(memcmp(dst, data, sizeof dst) == 0, "get data");
    /* A fetching atomic, answered with the old value. */
    uint64_t result = 0;
    gas_tl_amo_t amo = {.op = GAS_AMO_FETCH_ADD, .width = 8, .offset = 4096 + 128, .operand = 5,
                        .result = &result};
    gas_tl_comp_t c2 = {.pending = 1};
    UCHECK(gas_udp_ops.amo(&ch->base, &amo, &c2, "test") == GAS_INPROGRESS, "amo");
    pump();
    len = take(buf, &h, 1000);
    pos = GAS_UDP_HDR_LEN;
    while (len && (h.flags & GAS_UDP_F_NOSEQ))
        len = take(buf, &h, 1000);
    UCHECK(len && gas_udp_rec_next(buf, len, &pos, &r) && r.type == GAS_UDP_R_AMO && r.a == 5 &&
               r.amo_op == GAS_AMO_FETCH_ADD, "AMO request");
    peer_rx = h.seq + 1;
    struct gas_udp_rec rep = {.type = GAS_UDP_R_AMO_REPLY, .op = r.op, .a = 41};
    l = build(b, peer_seq++, &rep, 1, NULL);
    send_raw(b, l);
    /* The same reply again (a duplicate datagram): completes nothing twice. */
    send_raw(b, l);
    pump();
    UCHECK(atomic_load(&c2.pending) == 0 && result == 41, "fetched %llu", (unsigned long long)result);
    /* A reply to an operation nobody waits for is counted, not applied. */
    uint64_t bad = ch->c.bad;
    rep.op = 0x7777;
    l = build(b, peer_seq++, &rep, 1, NULL);
    send_raw(b, l);
    pump();
    UCHECK(ch->c.bad == bad + 1, "stray answer counted");
    send_ack(ch->next_seq, 0, 0, ch->next_seq);
    pump();
    drain();
}

/* The test asks rank 0 for a fetch-add of 1 on a word; rank 0's answer
 * (its header in *h) must carry the old value. */
static void ask_answer(unsigned char *buf, struct gas_udp_hdr *h, uint32_t op, uint64_t old)
{
    unsigned char b[256];
    struct gas_udp_rec r = {.type = GAS_UDP_R_AMO, .op = op, .off = 4096 + 192, .a = 1,
                            .amo_op = GAS_AMO_FETCH_ADD, .amo_width = 8};
    send_raw(b, build(b, peer_seq++, &r, 1, NULL));
    pump();
    size_t len;
    while ((len = take(buf, h, 1000)) != 0 && (h->flags & GAS_UDP_F_NOSEQ))
        ;
    size_t pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec a;
    UCHECK(len && gas_udp_rec_next(buf, len, &pos, &a) && a.type == GAS_UDP_R_AMO_REPLY &&
               a.op == op && a.a == old, "the answer to fetch-add %u", op);
    peer_rx = h->seq + 1;
}

/* Back the timeout off three steps, as three timeouts would. */
static void back_off(void)
{
    for (int i = 0; i < 3; i++)
        gas_udp_rtt_backoff(&ch->rtt);
    ch->backoff_ns = gas_rt_now_ns();
}

/*
 * A channel that only answers (the target of a fetch-add loop): it used to
 * have no RTT sample (answers alone gave none), so no tail-loss probe, and
 * a back-off that only a sample ended: every lost answer waited for the
 * timeout at its maximum (100-500 ms on a 1% lossy link).
 */
static void answers(void)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    unsigned char buf[65536];
    struct gas_udp_hdr h;
    gas_udp_rtt_init(&ch->rtt, c->rto_init, c->rto_min, c->rto_max); /* never measured */
    memset(seg + 4096 + 192, 0, 8);   /* the word the fetch-adds count on */
    back_off();
    ask_answer(buf, &h, 901, 0);
    UCHECK(h.flags & GAS_UDP_F_ACKREQ, "with no round trip measured, the answer asks for an ack");
    sleep_ms(2);
    send_ack(peer_rx, 0, 0, peer_rx);
    pump();
    UCHECK(ch->rtt.srtt >= 1000000, "the answer timed a round trip (srtt %llu ns)",
           (unsigned long long)ch->rtt.srtt);
    UCHECK(ch->rtt.backoff == 0, "and ended the back-off");

    back_off();
    uint64_t srtt = ch->rtt.srtt;
    ask_answer(buf, &h, 902, 1);
    int asked = (h.flags & GAS_UDP_F_ACKREQ) != 0; /* only if this step took 10 ms */
    send_ack(peer_rx, 0, 0, peer_rx);
    pump();
    UCHECK(asked || ch->rtt.srtt == srtt, "no sample from an answer that did not ask");
    UCHECK(ch->rtt.backoff == 0, "new data acknowledged: the back-off ends without a sample (%u)",
           ch->rtt.backoff);

    /* The next answer is lost: a probe sends it again, the 2 s timeout does not. */
    ch->rtt.rto = ch->rtt.max;
    uint64_t retx = ch->c.retx;
    ask_answer(buf, &h, 903, 2);
    uint32_t lost = h.seq;
    UCHECK(ch->tlp_at != 0, "a tail-loss probe is armed for the answer");
    uint64_t t0 = gas_rt_now_ns();
    int again = 0;
    while (!again && gas_rt_now_ns() - t0 < 1000000000u) {
        pump();
        while (take(buf, &h, 5))
            again |= h.seq == lost && (h.flags & GAS_UDP_F_RETX);
    }
    UCHECK(again && ch->c.retx == retx + 1 && !ch->frto,
           "the lost answer was probed again within 1 s, not timed out (retx +%llu)",
           (unsigned long long)(ch->c.retx - retx));
    send_ack(ch->next_seq, 0, 0, ch->next_seq);
    pump();
    UCHECK(ch->una == ch->next_seq && ch->inflight == 0, "all acknowledged");
    peer_rx = ch->next_seq;
    drain();
}

/*
 * An MTU black hole on the path: the peer acknowledges a small put, never
 * the two full-size datagrams of the next; the reason it is declared dead
 * (GAS_UDP_PEER_TIMEOUT, 300 ms here) names the size that did not get
 * through.  Last: the channel is dead afterwards.
 */
static void black_hole(void)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    unsigned char src[2 * 65536], buf[65536];
    struct gas_udp_hdr h;
    memset(src, 3, sizeof src);
    UCHECK(gas_udp_ops.put(&ch->base, 8192, src, 100, NULL, "test") == GAS_INPROGRESS, "small put");
    pump();
    while (take(buf, &h, 100))
        ;
    send_ack(ch->next_seq, 0, 0, ch->next_seq);
    pump();
    UCHECK(ch->una == ch->next_seq, "the small put acknowledged");
    /* two full datagrams: a PUT naming its whole put (16 + 16 bytes), then a CONT */
    size_t two = 2 * (c->dgram_max - GAS_UDP_HDR_LEN) - GAS_UDP_REC_LEN - 16 - GAS_UDP_CONT_LEN;
    UCHECK(gas_udp_ops.put(&ch->base, 8192, src, two, NULL, "test") == GAS_INPROGRESS, "full put");
    gas_udp_g.cfg.peer_timeout = 300000000u;
    uint64_t t0 = gas_rt_now_ns();
    while (!atomic_load(&ch->dead) && gas_rt_now_ns() - t0 < 5000000000u) {
        pump();
        while (take(buf, &h, 10)) /* the put's retransmissions: lost */
            ;
    }
    char want[64];
    snprintf(want, sizeof want, "only datagrams of %u bytes went unacknowledged", c->dgram_max);
    UCHECK(atomic_load(&ch->dead) && strstr(ch->err_msg, want) && strstr(ch->err_msg, "GAS_UDP_MTU"),
           "declared dead naming the datagrams that did not get through: \"%s\"", ch->err_msg);
}

int main(void)
{
    gas_rt_error_set_abort(0);
    setenv("GAS_PROGRESS", "poll", 1);
    setenv("GAS_UDP_IFACE", "lo", 1);
    /* Timeouts long enough that a VM's stall inside a step (tens of ms) does
     * not fire a second one where a step expects exactly one. */
    setenv("GAS_UDP_RTO_MIN", "40ms", 1);
    setenv("GAS_UDP_RTO_INIT", "40ms", 1);
    setenv("GAS_UDP_RTO_MAX", "2s", 1);
    setenv("GAS_UDP_ACK_DELAY", "0", 1);
    setenv("GAS_LOG_LEVEL", "fatal", 1);
    UCHECK(gas_rt_config_load() == GAS_OK, "config");
    seg = aligned_alloc(4096, SEG);
    memset(seg, 0, SEG);
    gas_tl_env_t env = {.rank = 0, .nranks = 2, .job_key = KEY, .node_id = 1, .seg_base = seg,
                        .seg_size = SEG, .seg_fd = -1};
    UCHECK(gas_udp_ops.init(&env) == GAS_OK, "init");
    psock = socket(AF_INET, SOCK_DGRAM, 0);
    paddr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof paddr;
    UCHECK(bind(psock, (struct sockaddr *)&paddr, sizeof paddr) == 0 &&
               getsockname(psock, (struct sockaddr *)&paddr, &al) == 0, "test socket");
    unsigned char blob[GAS_UDP_ADDR_LEN];
    memcpy(blob, &paddr.sin_addr.s_addr, 4);
    gas_udp_st16(blob + 4, ntohs(paddr.sin_port));
    gas_udp_st16(blob + 6, 0);
    gas_boot_put_u64(blob + 8, SEG);
    gas_boot_put_u64(blob + 16, 2);
    gas_tl_peer_t *peer;
    UCHECK(gas_udp_ops.connect(1, blob, sizeof blob, &peer) == GAS_OK, "connect");
    ch = (struct gas_udp_chan *)peer;
    UCHECK(ch->near, "loopback is the near link class");
    sending();
    timeout();
    tail_probe();
    loss_response();
    receiving();
    bounds();
    continuations();
    request_reply();
    answers();
    black_hole();
    gas_udp_ops.fini();
    close(psock);
    free(seg);
    return unit_finish("test_udp_chan");
}
