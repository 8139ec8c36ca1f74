/*
 * The udp delivery-rate estimate and pacer (rate.h), on made-up clocks:
 * no estimate before the first sample; a steady stream is measured at its
 * rate; bursts of acknowledgements (a receiver that was descheduled) are
 * not taken for a faster path; application-limited samples only raise the
 * estimate; retransmissions give no sample; the estimate lapses after two
 * windows without samples; a cut lowers it and ignores what was sent
 * before; the token bucket lets a burst through, then one datagram per
 * len / rate, saturates when idle, and does nothing when the rate is 0.
 */
#include "transport/udp/rate.h"
#include "unit.h"

#define US 1000ull
#define MS 1000000ull
#define WIN (10 * MS)

/* Within 1% of want. */
static int near(uint64_t got, uint64_t want)
{
    return got >= want - want / 100 && got <= want + want / 100;
}

/* Send n datagrams of len bytes every gap ns from *t, each acknowledged rtt
 * later (acks processed in send order); the last sample. */
static uint64_t stream(struct gas_udp_rate *r, uint64_t *t, int n, uint32_t len, uint64_t gap,
                       uint64_t rtt, unsigned flags)
{
    struct gas_udp_rate_snap s[64];
    uint64_t sample = 0;
    for (int done = 0; done < n; done += 64) {
        int k = n - done < 64 ? n - done : 64;
        /* Send k (the first of them as if nothing were in flight), then
         * take their acks: each arrives rtt after its datagram left. */
        uint64_t t0 = *t;
        for (int i = 0; i < k; i++)
            gas_udp_rate_snap(r, t0 + (uint64_t)i * gap, flags | (done == 0 && i == 0), &s[i]);
        for (int i = 0; i < k; i++)
            sample = gas_udp_rate_acked(r, &s[i], len, t0 + (uint64_t)i * gap + rtt, WIN);
        *t = t0 + (uint64_t)k * gap;
    }
    return sample;
}

static void estimate(void)
{
    struct gas_udp_rate r;
    gas_udp_rate_init(&r, 64000);
    uint64_t t = 1 * MS;
    UCHECK(gas_udp_rate_bw(&r, t) == 0, "no estimate before a sample");
    /* 1000 B every 10 us: 100 MB/s. */
    stream(&r, &t, 1000, 1000, 10 * US, 200 * US, 0);
    UCHECK(near(gas_udp_rate_bw(&r, t), 100000000ull), "steady stream: %llu B/s",
           (unsigned long long)gas_udp_rate_bw(&r, t));
    /* The receiver sleeps 5 ms, then acknowledges 100 datagrams at once: the
     * time they took to be sent bounds the sample. */
    struct gas_udp_rate_snap s[100];
    for (int i = 0; i < 100; i++)
        gas_udp_rate_snap(&r, t + (uint64_t)i * 10 * US, 0, &s[i]);
    uint64_t late = t + 5 * MS, max = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t v = gas_udp_rate_acked(&r, &s[i], 1000, late + (uint64_t)i * 100, WIN);
        max = v > max ? v : max;
    }
    t = late + 100 * 100;
    UCHECK(max <= 101000000ull, "a burst of late acks does not look faster (%llu B/s)",
           (unsigned long long)max);
    UCHECK(near(gas_udp_rate_bw(&r, t), 100000000ull), "estimate kept: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t));
    /* Application-limited and slower: ignored.  Faster: taken. */
    stream(&r, &t, 200, 1000, 40 * US, 200 * US, GAS_UDP_SNAP_APP);
    UCHECK(near(gas_udp_rate_bw(&r, t), 100000000ull), "slow app-limited samples ignored: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t));
    stream(&r, &t, 200, 1000, 5 * US, 200 * US, GAS_UDP_SNAP_APP);
    UCHECK(near(gas_udp_rate_bw(&r, t), 200000000ull), "a faster one raises it: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t));
    /* Retransmissions: counted as delivered, no sample. */
    uint64_t delivered = r.delivered;
    struct gas_udp_rate_snap x;
    gas_udp_rate_snap(&r, t, GAS_UDP_SNAP_RESENT, &x);
    UCHECK(gas_udp_rate_acked(&r, &x, 1000, t + 1, WIN) == 0 && r.delivered == delivered + 1000,
           "a retransmission: no sample, but delivered");
    /* Nothing for two windows: no estimate. */
    t += 2 * WIN + 1;
    UCHECK(gas_udp_rate_bw(&r, t) == 0, "lapsed: %llu", (unsigned long long)gas_udp_rate_bw(&r, t));
    /* A cut: 70%, and samples of datagrams sent before it do not count. */
    stream(&r, &t, 500, 1000, 10 * US, 200 * US, 0);
    for (int i = 0; i < 10; i++)
        gas_udp_rate_snap(&r, t + (uint64_t)i * 2 * US, 0, &s[i]);
    gas_udp_rate_cut(&r, 7, 10, t + 20 * US);
    UCHECK(near(gas_udp_rate_bw(&r, t + 20 * US), 70000000ull), "cut to 70%%: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t + 20 * US));
    for (int i = 0; i < 10; i++)
        gas_udp_rate_acked(&r, &s[i], 1000, t + 300 * US + (uint64_t)i * 2 * US, WIN);
    UCHECK(near(gas_udp_rate_bw(&r, t + 330 * US), 70000000ull),
           "samples from before the cut ignored: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t + 330 * US));
    t += 400 * US;
    stream(&r, &t, 300, 1000, 10 * US, 200 * US, 0);
    UCHECK(near(gas_udp_rate_bw(&r, t), 100000000ull), "later samples raise it again: %llu",
           (unsigned long long)gas_udp_rate_bw(&r, t));
}

static void pacer(void)
{
    struct gas_udp_rate r;
    gas_udp_rate_init(&r, 10000);
    uint64_t t = 5 * MS, when = 0;
    UCHECK(gas_udp_pace_take(&r, 1500, t, &when), "not paced: anything goes");
    gas_udp_pace_set(&r, 100000000ull, t); /* 100 bytes per us */
    int n = 0;
    while (gas_udp_pace_take(&r, 1000, t, &when))
        n++;
    UCHECK(n == 10, "a burst of 10000 bytes: %d datagrams", n);
    UCHECK(when == t + 10 * US, "the next in 10 us (%llu)", (unsigned long long)(when - t));
    UCHECK(!gas_udp_pace_take(&r, 1000, t + 9 * US, &when) && when == t + 10 * US,
           "not before (%llu)", (unsigned long long)(when - t));
    UCHECK(gas_udp_pace_take(&r, 1000, t + 10 * US, &when), "on time");
    /* Many small refills add up (no rounding lost per call). */
    t += 10 * US;
    n = 0;
    for (uint64_t ns = 1; ns <= 100 * US; ns++)
        n += gas_udp_pace_take(&r, 1000, t + ns, &when);
    UCHECK(n == 10, "100 us at 100 bytes per us: %d datagrams of 1000 bytes", n);
    /* Idle: the bucket fills up to the burst, no further. */
    t += 1000 * MS;
    n = 0;
    while (gas_udp_pace_take(&r, 1000, t, &when))
        n++;
    UCHECK(n == 10, "after idling, one burst: %d", n);
    gas_udp_pace_set(&r, 0, t);
    UCHECK(gas_udp_pace_take(&r, 60000, t, &when), "rate 0: not paced");
}

int main(void)
{
    estimate();
    pacer();
    return unit_finish("test_udp_rate");
}
