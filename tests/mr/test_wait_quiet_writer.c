/*
 * test_wait_quiet_writer - a gas_wait_until whose writer computes outside
 * libgas for longer than GAS_UDP_PEER_TIMEOUT is not failed for it
 * (GAS_TRANSPORT=udp, GAS_PROGRESS=poll, GAS_UDP_PEER_TIMEOUT=1s, 2 ranks).
 *
 * A wait that no one rank owes knocks at the udp peers it has talked to (so that
 * one whose process ended is found by its port's refusal), but asks them for
 * no answer: a poll-mode rank that makes no libgas call answers nothing, and
 * must not be declared dead for it.  Rank 1 sleeps QUIET seconds (3, three
 * peer timeouts; env QUIET_S to change it) without a libgas call and then
 * puts the value rank 0 waits for; rank 0's wait must return GAS_OK with the
 * value, and the job then finalizes cleanly.  Rank 0 prints "waiting" when
 * its wait begins (tests/scripts/udp-reject-blips.sh starts from it).
 */
#include "udp_test.h"

#include <unistd.h>

#define QUIET_DEFAULT_S 3

int main(void)
{
    test_begin("wait_quiet_writer");
    if (udp_test_skip(2, 1, 1, NULL))
        return 77;
    gas_ptr_t words;
    MUST(gas_malloc(8 * (size_t)t_nranks, &words));
    gas_ptr_t word0;
    MUST(gas_ptr_index(words, 8, 0, &word0));
    uint64_t *mine = t_rank == 0 ? gas_ptr_local(word0) : NULL;
    if (mine)
        *mine = 0;
    const char *q = getenv("QUIET_S");
    int quiet_s = q && atoi(q) > 0 ? atoi(q) : QUIET_DEFAULT_S;
    MUST(gas_barrier());   /* the ranks have talked: rank 0 knows rank 1's udp */
    if (t_rank == 1) {
        sleep((unsigned)quiet_s);   /* no libgas call: in poll mode nothing is answered */
        uint64_t one = 42;
        CHECK_OK(gas_put(word0, &one, 8));
        CHECK_OK(gas_quiet());
    } else {
        double t0 = test_elapsed();
        test_note("waiting");
        gas_status_t st = gas_wait_until_u64(mine, GAS_CMP_EQ, 42);
        double took = test_elapsed() - t0;
        CHECK(st == GAS_OK, "gas_wait_until_u64: %s (%s) after %.2f s", gas_strerror(st),
              gas_last_error(), took);
        CHECK(st != GAS_OK || *mine == 42, "the word is %llu, expected 42", (unsigned long long)*mine);
        CHECK(took >= quiet_s - 0.5, "the wait returned after %.2f s, before the writer wrote", took);
        test_note("waited %.2f s for a writer silent for %d s", took, quiet_s);
    }
    CHECK_OK(gas_barrier());
    return test_end();
}
