/*
 * The udp retransmission timer (RFC 6298): first and later samples, the
 * clamps, exponential back-off capped at the maximum and reset by a sample
 * or by acknowledged progress.
 */
#include "transport/udp/rtt.h"
#include "unit.h"

#define MS 1000000ull
#define US 1000ull

int main(void)
{
    struct gas_udp_rtt r;
    gas_udp_rtt_init(&r, 20 * MS, 2 * MS, 250 * MS);
    UCHECK(r.srtt == 0 && gas_udp_rtt_timeout(&r) == 20 * MS, "initial RTO %llu",
           (unsigned long long)gas_udp_rtt_timeout(&r));
    /* First sample R: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR. */
    gas_udp_rtt_sample(&r, 10 * MS);
    UCHECK(r.srtt == 10 * MS && r.rttvar == 5 * MS, "first sample: srtt %llu rttvar %llu",
           (unsigned long long)r.srtt, (unsigned long long)r.rttvar);
    UCHECK(gas_udp_rtt_timeout(&r) == 30 * MS, "RTO %llu", (unsigned long long)gas_udp_rtt_timeout(&r));
    /* Second: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R. */
    gas_udp_rtt_sample(&r, 2 * MS);
    UCHECK(r.rttvar == 5 * MS - 5 * MS / 4 + 8 * MS / 4, "rttvar %llu", (unsigned long long)r.rttvar);
    UCHECK(r.srtt == 10 * MS - 10 * MS / 8 + 2 * MS / 8, "srtt %llu", (unsigned long long)r.srtt);
    UCHECK(gas_udp_rtt_timeout(&r) == r.srtt + 4 * r.rttvar, "RTO formula");
    /* Small round trips: clamped to the minimum. */
    for (int i = 0; i < 200; i++)
        gas_udp_rtt_sample(&r, 30 * US);
    UCHECK(gas_udp_rtt_timeout(&r) == 2 * MS, "min clamp: %llu", (unsigned long long)gas_udp_rtt_timeout(&r));
    UCHECK(r.srtt < 100 * US, "srtt converges: %llu", (unsigned long long)r.srtt);
    /* Back-off doubles per timeout, up to the maximum, and stays there. */
    uint64_t want = 2 * MS;
    for (int i = 0; i < 10; i++) {
        gas_udp_rtt_backoff(&r);
        want = want * 2 > 250 * MS ? 250 * MS : want * 2;
        UCHECK(gas_udp_rtt_timeout(&r) == want, "backoff %d: %llu, want %llu", i,
               (unsigned long long)gas_udp_rtt_timeout(&r), (unsigned long long)want);
    }
    UCHECK(r.backoff <= 8, "back-off stops counting at the cap (%u)", r.backoff);
    gas_udp_rtt_sample(&r, 30 * US);
    UCHECK(r.backoff == 0 && gas_udp_rtt_timeout(&r) == 2 * MS, "a sample ends the back-off");
    /* So does new data acknowledged without a sample (Karn), the estimate kept. */
    uint64_t srtt = r.srtt;
    gas_udp_rtt_backoff(&r);
    gas_udp_rtt_backoff(&r);
    gas_udp_rtt_progress(&r);
    UCHECK(r.backoff == 0 && r.srtt == srtt && gas_udp_rtt_timeout(&r) == 2 * MS,
           "progress ends the back-off");
    /* Huge samples: clamped to the maximum. */
    gas_udp_rtt_sample(&r, 10000 * MS);
    UCHECK(gas_udp_rtt_timeout(&r) == 250 * MS, "max clamp");
    /* Zero samples are taken as 1 ns, never as "no sample". */
    gas_udp_rtt_init(&r, 20 * MS, 2 * MS, 250 * MS);
    gas_udp_rtt_sample(&r, 0);
    UCHECK(r.srtt == 1, "zero sample");
    return unit_finish("test_udp_rtt");
}
