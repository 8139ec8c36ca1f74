/*
 * test_wait_set - gas_wait_until_{all,any,some}_* and gas_test_until_*.
 *
 * Every rank sends to every rank (itself included) each round, in an order
 * and with pauses drawn per rank, so words become true in no fixed order:
 *  A. _any_u64: a payload by gas_put_signal (SET round+1); the receiver
 *     takes indices from wait_until_any, excludes each through status, and
 *     must get every sender exactly once, each payload whole.
 *  B. _all_i32: a negative value by an atomic SET; LE -(round+1) holds only
 *     as a signed comparison.  Senders skipped this round (a rule all ranks
 *     know) are excluded through status, so waiting on them would hang.
 *  C. _some_u32: the indices returned are ascending, not excluded, and
 *     satisfy EQ; every sender is seen exactly once.
 *  D. the test forms only (no other libgas call while waiting: with
 *     GAS_PROGRESS=poll over udp they must make progress themselves): any,
 *     some, all and the single word, each round bounded in time.
 *  E. no counted word (nelems 0, all excluded) and bad arguments: NULL
 *     arrays and result pointers, a misaligned array, an unknown comparison,
 *     an array that wraps; the error names the call.
 *  V. the _vector forms: every sender sets its word to a value of its own
 *     (negative: signed comparisons) by an atomic; the receiver waits with
 *     a comparison value per word (all, any, some, and the test forms in
 *     turn).  Then local words against values where a single value would
 *     give another answer, and their bad arguments.
 *   argv[1] = "nostatus": phase A ignores status (wrong on purpose: the same
 *   index comes back again and the test fails), to see the test can fail.
 * GAS_TIMEOUT is set (unless already set) so a wait that never ends fails.
 */
#include "check.h"

#include <time.h>

enum { MAXR = 64, PAY = 2048, ROUNDS = 12 };
enum { O_SIG = 0, O_I32 = O_SIG + 8 * MAXR, O_U32 = O_I32 + 4 * MAXR, O_SIG2 = O_U32 + 4 * MAXR,
       O_PAY = O_SIG2 + 8 * MAXR, O_VEC = O_PAY + MAXR * PAY, PART = O_VEC + 8 * MAXR };

static gas_ptr_t box;
static gas_layout_t bl;
static int me, n;
static int use_status = 1;

static gas_ptr_t at_rank(int r, uint64_t off)
{
    return gas_layout_ptr(&bl, (uint64_t)r * PART + off);
}

static void *my_local(uint64_t off)
{
    return test_local_of(at_rank(me, off));
}

static uint8_t pattern(int from, int to, int round, size_t i)
{
    return (uint8_t)(mix64(((uint64_t)from << 40) ^ ((uint64_t)to << 20) ^ (uint64_t)round) + i);
}

static size_t pay_len(int from, int to, int round)
{
    return 1 + (size_t)(mix64((uint64_t)(from * 131 + to * 7 + round)) % PAY);
}

/* A random order of all ranks, and a short random pause now and then. */
static void shuffle_ranks(test_rng_t *r, int *order)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint64_t)i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static void maybe_pause(test_rng_t *r)
{
    if (rng_below(r, 4) == 0) {
        struct timespec ts = {0, (long)rng_below(r, 300) * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Whether `from` skips `to` in phase B's round (every rank knows the rule). */
static int skips(int from, int to, int round)
{
    return n > 1 && (from + 2 * to + round) % 3 == 0;
}

static void send_payloads(test_rng_t *r, int round, uint64_t sig_off)
{
    int order[MAXR];
    uint8_t buf[PAY];
    shuffle_ranks(r, order);
    for (int k = 0; k < n; k++) {
        int to = order[k];
        size_t len = pay_len(me, to, round);
        for (size_t i = 0; i < len; i++)
            buf[i] = pattern(me, to, round, i);
        CHECK_OK(gas_put_signal(at_rank(to, O_PAY + (uint64_t)me * PAY), buf, len,
                                at_rank(to, sig_off + 8 * (uint64_t)me), (uint64_t)round + 1,
                                GAS_SIGNAL_SET));
        maybe_pause(r);
    }
}

static void check_payload(int from, int round)
{
    size_t len = pay_len(from, me, round);
    uint8_t want[PAY];
    for (size_t i = 0; i < len; i++)
        want[i] = pattern(from, me, round, i);
    check_bytes("payload", (const uint8_t *)my_local(O_PAY + (uint64_t)from * PAY), want, len, 0);
}

static void phase_any(test_rng_t *r)
{
    const uint64_t *sig = my_local(O_SIG);
    for (int round = 0; round < ROUNDS; round++) {
        send_payloads(r, round, O_SIG);
        int status[MAXR] = {0}, seen[MAXR] = {0};
        for (int k = 0; k < n; k++) {
            size_t idx = 12345;
            if (!CHECK_OK(gas_wait_until_any_u64(sig, (size_t)n, use_status ? status : NULL,
                                                 GAS_CMP_GE, (uint64_t)round + 1, &idx)))
                break;
            if (!CHECK(idx < (size_t)n && !seen[idx], "round %d: index %zu (seen %d)", round, idx,
                       idx < (size_t)n ? seen[idx] : -1))
                break;
            CHECK(sig[idx] == (uint64_t)round + 1, "round %d: sig[%zu] = %" PRIu64, round, idx,
                  sig[idx]);
            seen[idx] = 1;
            status[idx] = 1;
            check_payload((int)idx, round);
        }
        size_t none = 7;
        CHECK_OK(gas_wait_until_any_u64(sig, (size_t)n, status, GAS_CMP_GE, 0, &none));
        CHECK(!use_status || none == SIZE_MAX, "all excluded: index %zu, want SIZE_MAX", none);
        CHECK_OK(gas_barrier());   /* payload slots are reused next round */
    }
}

static void phase_all(test_rng_t *r)
{
    const int32_t *w = my_local(O_I32);
    for (int round = 0; round < ROUNDS; round++) {
        int order[MAXR];
        shuffle_ranks(r, order);
        for (int k = 0; k < n; k++) {
            int to = order[k];
            if (!skips(me, to, round))
                CHECK_OK(gas_atomic_set_i32(at_rank(to, O_I32 + 4 * (uint64_t)me), -(round + 1)));
            maybe_pause(r);
        }
        int status[MAXR];
        for (int s = 0; s < n; s++)
            status[s] = skips(s, me, round);
        CHECK_OK(gas_wait_until_all_i32(w, (size_t)n, status, GAS_CMP_LE, -(round + 1)));
        for (int s = 0; s < n; s++) {
            /* a skipped sender's word keeps what it wrote in its last round (0: none) */
            int32_t want = 0;
            for (int back = round; back >= 0; back--)
                if (!skips(s, me, back)) {
                    want = -(back + 1);
                    break;
                }
            CHECK(w[s] == want, "round %d: word of rank %d = %d, want %d", round, s, w[s], want);
        }
        CHECK_OK(gas_barrier());
    }
}

static void phase_some(test_rng_t *r)
{
    const uint32_t *w = my_local(O_U32);
    for (int round = 0; round < ROUNDS; round++) {
        int order[MAXR];
        shuffle_ranks(r, order);
        for (int k = 0; k < n; k++) {
            CHECK_OK(gas_atomic_set_u32(at_rank(order[k], O_U32 + 4 * (uint64_t)me),
                                        (uint32_t)round + 1));
            maybe_pause(r);
        }
        int status[MAXR] = {0}, got = 0;
        while (got < n) {
            size_t idx[MAXR], cnt = 99;
            if (!CHECK_OK(gas_wait_until_some_u32(w, (size_t)n, idx, status, GAS_CMP_EQ,
                                                  (uint32_t)round + 1, &cnt)))
                break;
            if (!CHECK(cnt >= 1 && cnt <= (size_t)(n - got), "round %d: count %zu", round, cnt))
                break;
            for (size_t i = 0; i < cnt; i++) {
                CHECK(i == 0 || idx[i] > idx[i - 1], "round %d: indices not ascending", round);
                CHECK(idx[i] < (size_t)n && !status[idx[i]], "round %d: index %zu excluded",
                      round, idx[i]);
                CHECK(w[idx[i]] == (uint32_t)round + 1, "round %d: word %zu = %u", round, idx[i],
                      w[idx[i]]);
                if (idx[i] < (size_t)n)
                    status[idx[i]] = 1;
            }
            got += (int)cnt;
        }
        CHECK_OK(gas_barrier());
    }
}

/* Phase D: waits by the test forms alone, bounded; returns 0 when time ran out. */
static int phase_test(test_rng_t *r)
{
    const uint64_t *sig = my_local(O_SIG2);
    for (int round = 0; round < ROUNDS; round++) {
        send_payloads(r, round, O_SIG2);
        uint64_t want = (uint64_t)round + 1;
        int status[MAXR] = {0}, got = 0, form = round % 4;
        double until = test_elapsed() + 30;
        while (got < n && test_elapsed() < until) {
            if (form == 0) {
                size_t idx;
                if (!CHECK_OK(gas_test_until_any_u64(sig, (size_t)n, status, GAS_CMP_EQ, want, &idx)))
                    return 0;
                if (idx != SIZE_MAX) {
                    CHECK(idx < (size_t)n && !status[idx], "test_any index %zu", idx);
                    status[idx] = 1;
                    check_payload((int)idx, round);
                    got++;
                }
            } else if (form == 1) {
                size_t idx[MAXR], cnt;
                if (!CHECK_OK(gas_test_until_some_u64(sig, (size_t)n, idx, status, GAS_CMP_EQ, want,
                                                      &cnt)))
                    return 0;
                for (size_t i = 0; i < cnt; i++) {
                    CHECK(idx[i] < (size_t)n && !status[idx[i]], "test_some index %zu", idx[i]);
                    status[idx[i]] = 1;
                    check_payload((int)idx[i], round);
                }
                got += (int)cnt;
            } else if (form == 2) {
                int done = -1;
                if (!CHECK_OK(gas_test_until_all_u64(sig, (size_t)n, NULL, GAS_CMP_EQ, want, &done)))
                    return 0;
                if (done) {
                    for (int s = 0; s < n; s++)
                        check_payload(s, round);
                    got = n;
                }
            } else {
                int done = -1;
                if (!CHECK_OK(gas_test_until_u64(&sig[got], GAS_CMP_EQ, want, &done)))
                    return 0;
                if (done)
                    check_payload(got++, round);
            }
        }
        if (!CHECK(got == n, "round %d (form %d): %d of %d signals seen by the test forms in 30 s",
                   round, form, got, n))
            return 0;
        CHECK_OK(gas_barrier());
    }
    return 1;
}

static void expect_error(const char *what, gas_status_t got, gas_status_t want, const char *call)
{
    if (!CHECK(got == want, "%s: status %d (%s), want %d (%s)", what, (int)got, gas_strerror(got),
               (int)want, gas_strerror(want)))
        return;
    CHECK(strstr(gas_last_error(), call) != NULL, "%s: the error \"%s\" does not name %s", what,
          gas_last_error(), call);
}

static void phase_edges(void)
{
    const uint64_t *sig = my_local(O_SIG);
    int status[MAXR];
    size_t idx = 5, cnt = 5, ind[MAXR];
    int done = 5;
    for (int s = 0; s < MAXR; s++)
        status[s] = 1;
    CHECK_OK(gas_wait_until_all_u64(NULL, 0, NULL, GAS_CMP_EQ, 99));
    CHECK_OK(gas_wait_until_all_u64(sig, (size_t)n, status, GAS_CMP_EQ, 99));
    CHECK_OK(gas_wait_until_any_u64(NULL, 0, NULL, GAS_CMP_EQ, 99, &idx));
    CHECK(idx == SIZE_MAX, "any over nothing: %zu", idx);
    CHECK_OK(gas_wait_until_some_u64(sig, (size_t)n, ind, status, GAS_CMP_EQ, 99, &cnt));
    CHECK(cnt == 0, "some over nothing: %zu", cnt);
    CHECK_OK(gas_test_until_all_i64((const int64_t *)sig, 0, NULL, GAS_CMP_EQ, 99, &done));
    CHECK(done == 1, "test_all over nothing: done %d", done);
    CHECK_OK(gas_test_until_any_i32(NULL, 0, NULL, GAS_CMP_EQ, 99, &idx));
    CHECK(idx == SIZE_MAX, "test_any over nothing: %zu", idx);
    CHECK_OK(gas_test_until_u64(sig, GAS_CMP_EQ, sig[0] + 1, &done));
    CHECK(done == 0, "test_until of a false condition: done %d", done);

    idx = 5;
    expect_error("NULL ivars", gas_wait_until_any_u64(NULL, 3, NULL, GAS_CMP_EQ, 1, &idx),
                 GAS_ERR_INVALID, "gas_wait_until_any_u64");
    CHECK(idx == SIZE_MAX, "after an error the index is %zu", idx);
    expect_error("NULL index_p", gas_wait_until_any_u32((const uint32_t *)sig, 2, NULL,
                                                        GAS_CMP_EQ, 1, NULL),
                 GAS_ERR_INVALID, "gas_wait_until_any_u32");
    expect_error("NULL indices", gas_wait_until_some_i64((const int64_t *)sig, 2, NULL, NULL,
                                                         GAS_CMP_EQ, 1, &cnt),
                 GAS_ERR_INVALID, "gas_wait_until_some_i64");
    expect_error("NULL count_p", gas_test_until_some_u64(sig, 2, ind, NULL, GAS_CMP_EQ, 1, NULL),
                 GAS_ERR_INVALID, "gas_test_until_some_u64");
    expect_error("NULL done_p", gas_test_until_all_u64(sig, 2, NULL, GAS_CMP_EQ, 1, NULL),
                 GAS_ERR_INVALID, "gas_test_until_all_u64");
    done = 7;
    expect_error("misaligned", gas_test_until_u64((const uint64_t *)((const char *)sig + 4),
                                                  GAS_CMP_EQ, 1, &done),
                 GAS_ERR_ALIGN, "gas_test_until_u64");
    CHECK(done == 0, "after an error done is %d", done);
    expect_error("misaligned all", gas_wait_until_all_i32((const int32_t *)((const char *)sig + 2),
                                                          2, NULL, GAS_CMP_EQ, 1),
                 GAS_ERR_ALIGN, "gas_wait_until_all_i32");
    expect_error("unknown cmp", gas_wait_until_all_u64(sig, 2, NULL, (gas_cmp_t)42, 1),
                 GAS_ERR_INVALID, "gas_wait_until_all_u64");
    expect_error("wrapping array", gas_test_until_any_u64((const uint64_t *)(UINTPTR_MAX - 15),
                                                          SIZE_MAX / 16, NULL, GAS_CMP_EQ, 1, &idx),
                 GAS_ERR_OVERFLOW, "gas_test_until_any_u64");
}

/* The value `from` sets in `to`'s vector word in `round`: its own per word and round. */
static int64_t vec_value(int from, int to, int round)
{
    return -((int64_t)(round + 1) * 1000 + (int64_t)from * 7 + to);
}

/* Phase V, remote part: words written by atomics, waited on with a value per word. */
static void phase_vector_remote(test_rng_t *r)
{
    const int64_t *w = my_local(O_VEC);
    for (int round = 0; round < ROUNDS; round++) {
        int order[MAXR];
        shuffle_ranks(r, order);
        for (int k = 0; k < n; k++) {
            CHECK_OK(gas_atomic_set_i64(at_rank(order[k], O_VEC + 8 * (uint64_t)me),
                                        vec_value(me, order[k], round)));
            maybe_pause(r);
        }
        int64_t want[MAXR];
        int status[MAXR] = {0}, got = 0, form = round % 4;
        for (int s = 0; s < n; s++)
            want[s] = vec_value(s, me, round);
        double until = test_elapsed() + 30;
        while (got < n && test_elapsed() < until) {
            size_t idx[MAXR], cnt = 0, one = SIZE_MAX;
            int done = 0;
            if (form == 0) {
                if (!CHECK_OK(gas_wait_until_all_vector_i64(w, (size_t)n, NULL, GAS_CMP_EQ, want)))
                    return;
                for (int s = 0; s < n; s++)
                    idx[cnt++] = (size_t)s;
            } else if (form == 1) {
                if (!CHECK_OK(gas_wait_until_any_vector_i64(w, (size_t)n, status, GAS_CMP_EQ, want,
                                                            &one)))
                    return;
                idx[cnt++] = one;
            } else if (form == 2) {
                if (!CHECK_OK(gas_wait_until_some_vector_i64(w, (size_t)n, idx, status, GAS_CMP_LE,
                                                             want, &cnt)))
                    return;
            } else {
                if (!CHECK_OK(gas_test_until_all_vector_i64(w, (size_t)n, NULL, GAS_CMP_EQ, want,
                                                            &done)))
                    return;
                for (int s = 0; done && s < n; s++)
                    idx[cnt++] = (size_t)s;
            }
            for (size_t i = 0; i < cnt; i++) {
                if (!CHECK(idx[i] < (size_t)n && (form == 0 || form == 3 || !status[idx[i]]),
                           "round %d (form %d): index %zu", round, form, idx[i]))
                    return;
                CHECK(w[idx[i]] == want[idx[i]], "round %d (form %d): word %zu = %" PRId64
                      ", want %" PRId64, round, form, idx[i], w[idx[i]], want[idx[i]]);
                status[idx[i]] = 1;
            }
            got += (int)cnt;
        }
        CHECK(got == n, "round %d (form %d): %d of %d vector words seen in 30 s", round, form,
              got, n);
        CHECK_OK(gas_barrier());   /* next round's values come after everyone looked */
    }
}

/* Phase V, local part: answers a single comparison value would get wrong, and bad arguments. */
static void phase_vector_local(void)
{
    int32_t w[6] = {-5, 10, -20, 30, 0, 7};
    int32_t v[6] = {-5, 11, -20, 29, 1, 7};   /* EQ holds at 0, 2, 5; GT at 3; LT at 1, 4 */
    size_t idx[6], cnt = 99, one = 99;
    int done = 9, status[6] = {0};
    CHECK_OK(gas_test_until_some_vector_i32(w, 6, idx, NULL, GAS_CMP_EQ, v, &cnt));
    CHECK(cnt == 3 && idx[0] == 0 && idx[1] == 2 && idx[2] == 5,
          "some_vector EQ: count %zu, first %zu", cnt, cnt ? idx[0] : SIZE_MAX);
    CHECK_OK(gas_test_until_some_vector_i32(w, 6, idx, NULL, GAS_CMP_LT, v, &cnt));
    CHECK(cnt == 2 && idx[0] == 1 && idx[1] == 4, "some_vector LT: count %zu", cnt);
    CHECK_OK(gas_test_until_all_vector_i32(w, 6, NULL, GAS_CMP_EQ, v, &done));
    CHECK(done == 0, "all_vector EQ with three false: done %d", done);
    status[1] = status[3] = status[4] = 1;
    CHECK_OK(gas_test_until_all_vector_i32(w, 6, status, GAS_CMP_EQ, v, &done));
    CHECK(done == 1, "all_vector EQ over the true ones: done %d", done);
    CHECK_OK(gas_wait_until_all_vector_i32(w, 6, status, GAS_CMP_GE, v));
    CHECK_OK(gas_test_until_any_vector_i32(w, 6, NULL, GAS_CMP_GT, v, &one));
    CHECK(one == 3, "any_vector GT: %zu, want 3", one);
    status[0] = 1;
    CHECK_OK(gas_wait_until_any_vector_i32(w, 6, status, GAS_CMP_EQ, v, &one));
    CHECK(one == 2, "any_vector EQ, 0 excluded: %zu, want 2", one);
    uint32_t uw[2] = {0x80000000u, 1}, uv[2] = {1, 0x80000000u};
    CHECK_OK(gas_test_until_some_vector_u32(uw, 2, idx, NULL, GAS_CMP_GT, uv, &cnt));
    CHECK(cnt == 1 && idx[0] == 0, "unsigned some_vector GT: count %zu", cnt);
    uint64_t u64w[2] = {5, 6}, u64v[2] = {6, 6};
    CHECK_OK(gas_test_until_any_vector_u64(u64w, 2, NULL, GAS_CMP_EQ, u64v, &one));
    CHECK(one == 1, "u64 any_vector EQ: %zu", one);
    CHECK_OK(gas_wait_until_some_vector_u64(u64w, 2, idx, NULL, GAS_CMP_NE, u64v, &cnt));
    CHECK(cnt == 1 && idx[0] == 0, "u64 some_vector NE: count %zu", cnt);
    CHECK_OK(gas_wait_until_all_vector_u64(NULL, 0, NULL, GAS_CMP_EQ, NULL));

    one = 5;
    expect_error("NULL cmp_values", gas_wait_until_any_vector_i32(w, 6, NULL, GAS_CMP_EQ, NULL,
                                                                  &one),
                 GAS_ERR_INVALID, "gas_wait_until_any_vector_i32");
    CHECK(one == SIZE_MAX, "after an error the index is %zu", one);
    CHECK(strstr(gas_last_error(), "cmp_values") != NULL, "the error \"%s\" does not name "
          "cmp_values", gas_last_error());
    int64_t wv[3] = {0}, vv[3] = {0};
    done = 7;
    expect_error("misaligned cmp_values",
                 gas_test_until_all_vector_i64(wv, 2, NULL, GAS_CMP_EQ,
                                               (const int64_t *)((const char *)vv + 4), &done),
                 GAS_ERR_ALIGN, "gas_test_until_all_vector_i64");
    CHECK(done == 0, "after an error done is %d", done);
    expect_error("NULL count_p", gas_test_until_some_vector_u64(u64w, 2, idx, NULL, GAS_CMP_EQ,
                                                                u64v, NULL),
                 GAS_ERR_INVALID, "gas_test_until_some_vector_u64");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "nostatus") == 0)
        use_status = 0;
    setenv("GAS_TIMEOUT", "30", 0);
    test_begin("wait_set");
    me = t_rank;
    n = t_nranks;
    if (n > MAXR)
        test_die("more ranks than the test's arrays hold");
    MUST(gas_malloc((size_t)n * PART, &box));
    bl = test_layout_of(box);
    if (!CHECK(bl.block == PART, "block %" PRIu64 ", expected %d", bl.block, PART))
        test_die("unexpected layout");
    memset(my_local(0), 0, PART);
    MUST(gas_barrier());
    test_rng_t r = rng_make(me, 7);
    phase_any(&r);
    phase_all(&r);
    phase_some(&r);
    phase_test(&r);
    phase_edges();
    phase_vector_remote(&r);
    phase_vector_local();
    MUST(gas_barrier());
    MUST(gas_free(box));
    return test_end();
}
