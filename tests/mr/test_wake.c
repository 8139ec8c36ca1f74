/*
 * test_wake - a sleeping wait is woken by whoever satisfies it, in a job whose
 * ranks talk both over shared memory (on their node) and over udp (to the
 * other node).  Run by tests/scripts/wake-netns.sh with GAS_WAIT_SPIN=0 (every
 * wait sleeps at once) and a sleep slice of many minutes (GAS_WAIT_SLICE): a
 * wake-up that does not arrive then shows as a stall that the test's time
 * bound turns into a failure, rather than as a 1-2 ms delay per wait.
 *
 * 1. Every rank contacts every other (a put to each, a world barrier), so the
 *    udp peers are active: a waiter may now sleep in the udp socket.
 * 2. On the node team (shm only), ROUNDS rounds of: an allreduce (sum of
 *    round * 1000 + team rank over the members), a broadcast from a rotating
 *    root, a team barrier.  Each result is checked against its reference.
 * 3. On the node team, team ranks 0 and 1 play ping-pong with gas_put_signal
 *    and gas_wait_until (one watched word, written over shm), ROUNDS times,
 *    checking the payload of every turn.
 * 4. Rank r and rank r + n/2 (on the other node, as netns-run.sh places
 *    ranks) play the same ping-pong over udp, on a word of their own: the
 *    waiter sleeps in the udp socket (poll mode, and the one waiting thread
 *    of a rank with a progress thread) and the datagram must wake it.
 * 5. A world allreduce (mixed: shm and udp) checked against its reference.
 */
#include "check.h"

enum { ROUNDS = 300, PAY = 64 };
enum { O_SIG = 0, O_PAY = 64, O_SIG2 = 128, O_PAY2 = 192, O_CONTACT = 256, PART = O_CONTACT + 8 * 64 };

static gas_ptr_t arr;
static gas_layout_t lay;

static gas_ptr_t at_rank(int r, uint64_t off)
{
    return gas_layout_ptr(&lay, (uint64_t)r * PART + off);
}

static void contact_everyone(int me, int n)
{
    for (int r = 0; r < n; r++) {
        uint64_t v = (uint64_t)me + 1;
        CHECK_OK(gas_put(at_rank(r, O_CONTACT + 8 * (uint64_t)(me % 64)), &v, 8));
    }
    MUST(gas_barrier());
}

static void node_collectives(gas_team_t node)
{
    int tr = gas_team_rank(node), ts = gas_team_size(node);
    for (int k = 0; k < ROUNDS; k++) {
        int64_t mine = (int64_t)k * 1000 + tr, sum = -1;
        int64_t want = (int64_t)k * 1000 * ts + (int64_t)ts * (ts - 1) / 2;
        CHECK_OK(gas_allreduce(node, &sum, &mine, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(sum == want, "round %d: node allreduce gave %" PRId64 ", expected %" PRId64, k, sum,
              want);
        int root = k % ts;
        uint64_t b[4];
        for (int i = 0; i < 4; i++)
            b[i] = tr == root ? (uint64_t)k * 7 + (uint64_t)i : 0;
        CHECK_OK(gas_broadcast(node, b, 4, GAS_UINT64, root));
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == (uint64_t)k * 7 + (uint64_t)i,
                  "round %d: broadcast from node rank %d: element %d is %" PRIu64, k, root, i, b[i]);
        CHECK_OK(gas_team_barrier(node));
    }
}

/* ROUNDS turns of put-signal ping-pong with world rank `other`, through the
 * words at o_sig / o_pay of each; `first` says who starts. */
static void ping_pong(int me, int other, int first, uint64_t o_sig, uint64_t o_pay)
{
    uint8_t *mine = gas_ptr_local(at_rank(me, 0));
    uint64_t *sig = (uint64_t *)(mine + o_sig);
    uint8_t pay[PAY];
    for (int k = 0; k < ROUNDS; k++) {
        int my_turn = (k % 2) == !first;
        if (my_turn) {
            for (int i = 0; i < PAY; i++)
                pay[i] = (uint8_t)(k * 3 + i + me);
            CHECK_OK(gas_put_signal(at_rank(other, o_pay), pay, PAY, at_rank(other, o_sig),
                                    (uint64_t)k + 1, GAS_SIGNAL_SET));
        } else {
            CHECK_OK(gas_wait_until_u64(sig, GAS_CMP_GE, (uint64_t)k + 1));
            int bad = 0;
            for (int i = 0; i < PAY; i++)
                bad += mine[o_pay + i] != (uint8_t)(k * 3 + i + other);
            CHECK(bad == 0, "ping-pong turn %d: %d of %d bytes from rank %d wrong", k, bad, PAY,
                  other);
        }
    }
}

static void node_ping_pong(gas_team_t node, int me)
{
    int tr = gas_team_rank(node);
    if (gas_team_size(node) < 2 || tr > 1)
        return;
    int other = -1;
    CHECK_OK(gas_team_translate(node, 1 - tr, GAS_TEAM_WORLD, &other));
    ping_pong(me, other, tr == 0, O_SIG, O_PAY);
}

int main(void)
{
    test_begin("wake");
    int n = t_nranks, me = t_rank;
    MUST(gas_malloc((size_t)n * PART, &arr));
    lay = test_layout_of(arr);
    memset(gas_ptr_local(at_rank(me, 0)), 0, PART);
    MUST(gas_barrier());
    contact_everyone(me, n);

    gas_team_t node = GAS_TEAM_NULL;
    MUST(gas_team_split_node(GAS_TEAM_WORLD, &node));
    if (me == 0)
        test_note("node team of %d; %d rounds each of collectives and ping-pong", gas_team_size(node),
                  ROUNDS);
    node_collectives(node);
    node_ping_pong(node, me);
    if (n % 2 == 0)
        ping_pong(me, (me + n / 2) % n, me < n / 2, O_SIG2, O_PAY2);

    int64_t one = me, total = -1, want = (int64_t)n * (n - 1) / 2;
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &total, &one, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(total == want, "world allreduce gave %" PRId64 ", expected %" PRId64, total, want);
    for (int r = 0; r < n; r++) {
        uint64_t v = ((uint64_t *)((uint8_t *)gas_ptr_local(at_rank(me, 0)) + O_CONTACT))[r % 64];
        CHECK(r >= 64 || v == (uint64_t)r + 1, "rank %d's contact word is %" PRIu64, r, v);
    }
    CHECK_OK(gas_team_destroy(node));
    CHECK_OK(gas_free(arr));
    return test_end();
}
