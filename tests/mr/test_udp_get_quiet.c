/*
 * test_udp_get_quiet - after gas_quiet, every gas_get_nbi is in its
 * destination, also when the reply spans several datagrams and the network
 * loses or reorders some (run with GAS_TEST_UDP_DROP / GAS_TEST_UDP_REORDER).
 *
 * Every rank reads, ROUNDS times, a few blocks of the next rank's part with
 * gas_get_nbi (sizes from one byte to several datagrams), into buffers
 * filled with a poison byte, then calls gas_quiet and checks every byte
 * against the pattern the owner wrote.  All ranks read at once, so each
 * stream carries requests and replies both ways: a request held at its
 * target behind a lost datagram was answered while the target's
 * acknowledgement point already counted it, and the first datagram of a
 * long reply then completed the initiator's quiet before the rest arrived
 * (docs/udp.md).  Also checks that no reply lands after the quiet: each
 * round's buffers are checked again after the next round's quiet.
 */
#include "udp_test.h"

#define ROUNDS 800
#define PART (64u << 10)
#define NGETS 3
#define POISON 0x5a

static const size_t sizes[] = {1, 700, 1500, 4000, 9000, 30000, 65536};

int main(void)
{
    test_begin("udp_get_quiet");
    int next = (t_rank + 1) % t_nranks;
    if (udp_test_skip(2, 0, next, NULL))
        return 77;
    gas_ptr_t arr;
    MUST(gas_malloc((size_t)PART * (size_t)t_nranks, &arr));
    uint8_t *mine = gas_ptr_local(test_at(arr, (uint64_t)t_rank * PART));
    pattern_fill(mine, PART, t_rank, 0, 0);
    MUST(gas_barrier());
    test_rng_t r = rng_make(t_rank, 5);
    uint8_t *buf[2][NGETS];
    size_t len[2][NGETS];
    uint64_t from[2][NGETS];
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < NGETS; k++)
            buf[b][k] = test_xmalloc(PART);
    long short_after_quiet = 0, late_writes = 0;
    for (int round = 0; round < ROUNDS && t_failures == 0; round++) {
        int cur = round & 1, prev = cur ^ 1;
        for (int k = 0; k < NGETS; k++) {
            len[cur][k] = sizes[rng_below(&r, sizeof sizes / sizeof sizes[0])];
            from[cur][k] = rng_below(&r, PART - len[cur][k] + 1);
            memset(buf[cur][k], POISON, len[cur][k]);
            CHECK_OK(gas_get_nbi(buf[cur][k], test_at(arr, (uint64_t)next * PART + from[cur][k]),
                                 len[cur][k]));
        }
        CHECK_OK(gas_quiet());
        for (int k = 0; k < NGETS; k++) {
            size_t bad = pattern_find_mismatch(buf[cur][k], len[cur][k], next, 0, from[cur][k]);
            if (bad != len[cur][k] && short_after_quiet++ < 3)
                FAIL("round %d get %d: byte %zu of %zu (from offset %" PRIu64 " of rank %d) is "
                     "%#x after gas_quiet", round, k, bad, len[cur][k], from[cur][k], next,
                     buf[cur][k][bad]);
            if (round == 0)
                continue;
            bad = pattern_find_mismatch(buf[prev][k], len[prev][k], next, 0, from[prev][k]);
            if (bad != len[prev][k] && late_writes++ < 3)
                FAIL("round %d get %d: its buffer changed after its quiet (byte %zu is %#x)",
                     round - 1, k, bad, buf[prev][k][bad]);
        }
    }
    CHECK(short_after_quiet == 0 && late_writes == 0,
          "%ld gets incomplete after gas_quiet, %ld buffers written after it", short_after_quiet,
          late_writes);
    MUST(gas_barrier());
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < NGETS; k++)
            free(buf[b][k]);
    return test_end();
}
