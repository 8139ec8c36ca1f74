/*
 * test_udp_lease - a put-signal ping-pong that keeps both ranks polling the
 * udp socket (each the holder of its lease) for TEST_SECS seconds (default
 * 2), checking the payload of every turn.  Run by tests/scripts/udp-lease.sh
 * over two network namespaces beside CPU hogs, where the scheduler preempts
 * the holders: with the automatic lease (GAS_UDP_LEASE=0) a rank must then
 * say that its lease grew; with a lease set by the user it must keep it.
 * Rank 0 decides when to stop: its last turn carries the stop flag.
 */
#include "check.h"

#include <stdlib.h>

enum { PAY = 200, O_SIG = 0, O_PAY = 64, PART = O_PAY + PAY + 56 };

static gas_ptr_t arr;

static gas_ptr_t at_rank(int r, uint64_t off)
{
    return test_at(arr, (uint64_t)r * PART + off);
}

static uint8_t pay_byte(uint64_t turn, int i, int writer)
{
    return (uint8_t)(turn * 5 + (uint64_t)i * 3 + (uint64_t)writer);
}

int main(void)
{
    test_begin("udp_lease");
    if (t_nranks != 2)
        test_die("run with 2 ranks");
    const char *s = getenv("TEST_SECS");
    double secs = s ? atof(s) : 2.0;
    MUST(gas_malloc((size_t)PART * 2, &arr));
    int me = t_rank, other = 1 - t_rank;
    uint8_t *mine = gas_ptr_local(at_rank(me, 0));
    uint64_t *sig = (uint64_t *)(mine + O_SIG);
    MUST(gas_barrier());
    uint8_t pay[PAY];
    uint64_t turn = 1;
    int stop = 0;
    double t0 = test_elapsed();
    while (!stop) {
        if ((turn % 2 == 1) == (me == 0)) {
            if (me == 0 && test_elapsed() - t0 >= secs)
                stop = 1;
            for (int i = 0; i < PAY; i++)
                pay[i] = pay_byte(turn, i, me);
            pay[0] = (uint8_t)stop;
            if (!CHECK_OK(gas_put_signal(at_rank(other, O_PAY), pay, PAY, at_rank(other, O_SIG),
                                         turn, GAS_SIGNAL_SET)))
                break;
        } else {
            if (!CHECK_OK(gas_wait_until_u64(sig, GAS_CMP_GE, turn)))
                break;
            int bad = 0;
            for (int i = 1; i < PAY; i++)
                bad += mine[O_PAY + i] != pay_byte(turn, i, other);
            if (!CHECK(bad == 0, "turn %" PRIu64 ": %d of %d bytes from rank %d wrong", turn, bad,
                       PAY - 1, other))
                break;
            stop = mine[O_PAY] != 0;
        }
        turn++;
    }
    if (me == 0)
        test_note("%" PRIu64 " turns in %.2f s", turn - 1, test_elapsed() - t0);
    MUST(gas_barrier());
    return test_end();
}
