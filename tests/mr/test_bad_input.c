/*
 * test_bad_input - every kind of bad argument gets its documented status, changes
 * nothing, and leaves the job usable (run with GAS_ERRORS=return).
 *
 * After every case all ranks do a correct put/get/barrier exchange and each
 * owner checks that its part of a reference array kept its contents.  Cases:
 * rank out of range (GAS_ERR_RANK); pointers into freed memory, beyond the
 * segment, GAS_NULL (GAS_ERR_BOUNDS); ranges running past the end of an
 * allocation, for every transfer call (GAS_ERR_BOUNDS, nothing written, get
 * destinations untouched); misaligned atomics and signal words (GAS_ERR_ALIGN,
 * the payload of a put-with-signal not written; GAS_ERR_ALIGN also where the
 * word runs past the array's end or names no rank: alignment is checked
 * first); a put-with-signal whose signal word lies in the target's unclaimed
 * middle (GAS_ERR_BOUNDS, none of its payload written: several datagrams on
 * the signal's owner, or two owners); failed _nb calls (the handle is
 * GAS_HANDLE_NULL, and waiting on it returns at once); bad width, op, cmp,
 * distribution, stride (GAS_ERR_INVALID); fetching atomics without a result
 * pointer (GAS_ERR_INVALID, the word unchanged); NULL buffers and output
 * pointers (GAS_ERR_INVALID); zero-length transfers with any pointers
 * (GAS_OK); huge lengths (GAS_ERR_BOUNDS or GAS_ERR_OVERFLOW); gas_malloc
 * larger than the segment (GAS_ERR_NOSPACE everywhere, then a small
 * allocation works and is the same pointer on every rank); gas_malloc with
 * different arguments on different ranks (GAS_ERR_INVALID everywhere);
 * gas_free of a pointer that is not an allocation base (GAS_ERR_INVALID or
 * GAS_ERR_BOUNDS).  gas_last_error() names the failed call; gas_strerror()
 * describes every status.
 */
#include "check.h"

enum { APART = 4096 };

static gas_ptr_t ctl, arr;
static gas_layout_t al;
static uint64_t anbytes;
static int me, n, next, prev, case_no;

static int check_either_at(const char *file, int line, const char *call, gas_status_t got,
                           gas_status_t a, gas_status_t b)
{
    if (got == a || got == b)
        return 1;
    test_fail_at(file, line, "%s returned %d (%s), expected %d (%s) or %d (%s); last error: \"%s\"", call,
                 (int)got, gas_strerror(got), (int)a, gas_strerror(a), (int)b, gas_strerror(b), gas_last_error());
    return 0;
}
#define CHECK_EITHER(call, a, b) check_either_at(__FILE__, __LINE__, #call, (call), (a), (b))

/* gas_last_error() must be non-empty and name the call that just failed. */
static void check_last_error(const char *call)
{
    const char *m = gas_last_error();
    CHECK(m != NULL && strstr(m, call) != NULL, "after a failed %s, gas_last_error() is \"%s\", which does not "
          "name the call", call, m ? m : "(NULL)");
}

/* A correct exchange, and my part of arr unchanged; collective. */
static void still_usable(const char *after)
{
    uint64_t v = ((uint64_t)case_no << 32) | (uint64_t)me, got = 0, want = ((uint64_t)case_no << 32) | (uint64_t)prev;
    case_no++;
    CHECK_OK(gas_put(test_at(ctl, (uint64_t)next * 8), &v, 8));
    MUST(gas_barrier());
    CHECK_OK(gas_get(&got, test_at(ctl, (uint64_t)me * 8), 8));
    CHECK(got == want, "after %s: a correct put/get exchange got 0x%" PRIx64 ", expected 0x%" PRIx64, after, got, want);
    const uint8_t *mine = gas_ptr_local(gas_layout_ptr(&al, (uint64_t)me * APART));
    char what[160];
    snprintf(what, sizeof what, "after %s: my part of the reference array", after);
    if (mine)
        check_pattern(what, mine, APART, 77, 0, (uint64_t)me * APART, (uint64_t)me * APART);
    MUST(gas_barrier());
}

static void case_rank(void)
{
    uint64_t buf[4] = { 1, 2, 3, 4 }, res = 0;
    gas_handle_t h = GAS_HANDLE_NULL;
    unsigned rb = gas_ptr_split_.rank_bits;
    if (rb < 63 && (uint64_t)n >= (UINT64_C(1) << rb)) {
        test_note("rank case skipped: %d ranks fill all %u rank bits", n, rb);
        return;
    }
    gas_ptr_t p = gas_ptr_make(n, gas_ptr_offset(arr));
    CHECK_STATUS(gas_put(p, buf, 8), GAS_ERR_RANK);
    check_last_error("gas_put");
    CHECK_STATUS(gas_get(buf, p, 8), GAS_ERR_RANK);
    check_last_error("gas_get");
    CHECK_STATUS(gas_put_nbi(p, buf, 8), GAS_ERR_RANK);
    CHECK_STATUS(gas_get_nbi(buf, p, 8), GAS_ERR_RANK);
    CHECK_STATUS(gas_put_nb(p, buf, 8, &h), GAS_ERR_RANK);
    CHECK_STATUS(gas_get_nb(buf, p, 8, &h), GAS_ERR_RANK);
    CHECK_STATUS(gas_iput(p, buf, 1, 1, 8, 2), GAS_ERR_RANK);
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, p, 1, 0, &res), GAS_ERR_RANK);
    check_last_error("gas_amo");
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_ADD, 8, p, 1, 0, NULL), GAS_ERR_RANK);
    CHECK_STATUS(gas_put_signal(test_at(arr, 0), buf, 8, p, 1, GAS_SIGNAL_SET), GAS_ERR_RANK);
    CHECK_STATUS(gas_quiet(), GAS_OK);
    /* the highest rank the bits can name */
    if (rb < 63 && (UINT64_C(1) << rb) - 1 >= (uint64_t)n) {
        gas_ptr_t q = gas_ptr_make((int)((UINT64_C(1) << rb) - 1), 64);
        CHECK_STATUS(gas_put(q, buf, 8), GAS_ERR_RANK);
    }
}

static void case_outside(void)
{
    uint64_t buf[2] = { 0x1111, 0x2222 }, res = 0;
    gas_ptr_t freed = GAS_NULL;
    const gas_ptr_split_t *s = &gas_ptr_split_;

    /* inside the segment but no longer allocated */
    MUST(gas_malloc((size_t)n * 4096, &freed));
    gas_layout_t fl = test_layout_of(freed);
    MUST(gas_free(freed));
    gas_ptr_t in_freed = gas_layout_ptr(&fl, (uint64_t)next * fl.block + 64);
    CHECK_STATUS(gas_put(in_freed, buf, 8), GAS_ERR_BOUNDS);
    check_last_error("gas_put");
    CHECK_STATUS(gas_get(buf, in_freed, 8), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_put_nbi(in_freed, buf, 16), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, in_freed, 1, 0, &res), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_amo(GAS_AMO_SET, 4, in_freed, 1, 0, NULL), GAS_ERR_BOUNDS);

    /* beyond the segment, on this rank and the next */
    if (s->segment_size + 4096 <= s->offset_mask) {
        gas_ptr_t beyond = gas_ptr_make(next, s->segment_size + 64);
        CHECK_STATUS(gas_put(beyond, buf, 8), GAS_ERR_BOUNDS);
        CHECK_STATUS(gas_get(buf, beyond, 8), GAS_ERR_BOUNDS);
        CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, beyond, 1, 0, NULL), GAS_ERR_BOUNDS);
        CHECK_STATUS(gas_put(gas_ptr_make(me, s->offset_mask - 7), buf, 8), GAS_ERR_BOUNDS);
        gas_ptr_t r = GAS_NULL;
        gas_layout_t l;
        CHECK_STATUS(gas_ptr_add(beyond, 1, &r), GAS_ERR_BOUNDS);
        CHECK_STATUS(gas_layout(beyond, &l), GAS_ERR_BOUNDS);
    }
    /* the unclaimed middle of the next rank's segment, between the heap's top
     * and its gas_alloc memory: over shm the initiator refuses it, over udp
     * the target (rdma writes land unchecked: docs/rdma.md) */
    gas_peer_stats_t ps;
    const char *tr = getenv("GAS_TRANSPORT");
    /* (a route upgraded to rdma between the check and the calls would land them) */
    int rdma = (tr && strcmp(tr, "rdma") == 0) ||
               (gas_peer_stats(next, &ps) == GAS_OK && strcmp(ps.transport, "rdma") == 0);
    if (s->segment_size >= (64u << 20) && !rdma) {
        /* (a put's refusal by its target may come only with gas_quiet) */
        gas_ptr_t mid = gas_ptr_make(next, (s->segment_size / 2) & ~(uint64_t)4095);
        CHECK_STATUS(gas_get(buf, mid, 8), GAS_ERR_BOUNDS);
        CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, mid, 1, 0, &res), GAS_ERR_BOUNDS);
        for (int k = 0; k < 3; k++) {
            gas_status_t q = k == 0 ? gas_put(mid, buf, 8)
                           : k == 1 ? gas_put_nbi(mid, buf, 8)
                                    : gas_put_signal(test_at(arr, (uint64_t)next * APART + 256), buf, 8,
                                                     mid, 1, GAS_SIGNAL_ADD);
            if (q == GAS_OK)
                q = gas_quiet();
            CHECK(q == GAS_ERR_BOUNDS, "%s into the unclaimed middle, then gas_quiet: %s",
                  k == 0 ? "gas_put" : k == 1 ? "gas_put_nbi" : "gas_put_signal's signal",
                  gas_strerror(q));
        }
        /* A put-with-signal whose signal word is refused writes none of its payload
         * (the owners' parts of the reference array are checked by still_usable):
         * a payload of several datagrams on the signal's owner (udp: every piece
         * names the signal, and the target refuses each), and one over two owners
         * (the signal's owner is asked first).  Both ranks' parts hold the pattern. */
        uint8_t *pay = test_xmalloc(3 * 1024);
        memset(pay, 0xee, 3 * 1024);
        for (int k = 0; k < (n < 2 ? 1 : 2); k++) {
            gas_ptr_t at = k == 0 ? test_at(arr, (uint64_t)next * APART + 512)
                                  : test_at(arr, (uint64_t)(n - 2) * APART + APART - 1024);
            gas_status_t q = k == 0 ? gas_put_signal(at, pay, 3 * 1024, mid, 1, GAS_SIGNAL_ADD)
                                    : gas_put_signal_nbi(at, pay, 2048, mid, 1, GAS_SIGNAL_SET);
            if (q == GAS_OK)
                q = gas_quiet();
            CHECK(q == GAS_ERR_BOUNDS, "%s with its signal in the unclaimed middle, then "
                  "gas_quiet: %s", k == 0 ? "a 3 KiB gas_put_signal" :
                  "a gas_put_signal_nbi over two owners", gas_strerror(q));
        }
        free(pay);
    }
    /* GAS_NULL is never valid */
    CHECK_EITHER(gas_put(GAS_NULL, buf, 8), GAS_ERR_BOUNDS, GAS_ERR_INVALID);
    CHECK_EITHER(gas_get(buf, GAS_NULL, 8), GAS_ERR_BOUNDS, GAS_ERR_INVALID);
    CHECK_EITHER(gas_amo(GAS_AMO_ADD, 8, GAS_NULL, 1, 0, NULL), GAS_ERR_BOUNDS, GAS_ERR_INVALID);
    CHECK_OK(gas_quiet());
}

static void case_past_end(void)
{
    uint8_t buf[256], dst[256];
    gas_handle_t h = GAS_HANDLE_NULL;
    uint64_t near_end = anbytes - 16;
    gas_ptr_t p = test_at(arr, near_end), mid = test_at(arr, 100);
    memset(buf, 0xee, sizeof buf);

    CHECK_STATUS(gas_put(p, buf, 32), GAS_ERR_BOUNDS);
    check_last_error("gas_put");
    CHECK_STATUS(gas_put(p, buf, 17), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_put_nbi(p, buf, 32), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_put_nb(p, buf, 32, &h), GAS_ERR_BOUNDS);
    /* from the middle of rank 0's part over every owner and past the end */
    CHECK_STATUS(gas_put(mid, buf, 0), GAS_OK);
    uint8_t *big = test_xmalloc(anbytes);
    memset(big, 0xee, anbytes);
    CHECK_STATUS(gas_put(mid, big, anbytes - 99), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_put_nbi(mid, big, anbytes - 99), GAS_ERR_BOUNDS);
    /* strided: elements at end-64, -48, -32, -16 and one at the end itself */
    CHECK_STATUS(gas_iput(test_at(arr, anbytes - 64), buf, 2, 1, 8, 5), GAS_ERR_BOUNDS);
    /* put-with-signal whose payload runs past the end: neither payload nor signal (a word of the
       reference pattern, checked by its owner) */
    CHECK_STATUS(gas_put_signal(p, buf, 32, test_at(arr, (uint64_t)next * APART + 64), 99, GAS_SIGNAL_SET),
                 GAS_ERR_BOUNDS);
    check_last_error("gas_put_signal");
    /* gets: the error leaves the destination untouched */
    memset(dst, 0x3c, sizeof dst);
    CHECK_STATUS(gas_get(dst, p, 32), GAS_ERR_BOUNDS);
    check_last_error("gas_get");
    CHECK_STATUS(gas_get_nbi(dst, p, 17), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_get_nb(dst, p, 32, &h), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_iget(dst, test_at(arr, anbytes - 64), 1, 2, 8, 5), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_quiet(), GAS_OK);
    size_t bad = 0;
    for (size_t i = 0; i < sizeof dst; i++)
        bad += dst[i] != 0x3c;
    CHECK(bad == 0, "failed gets past the end of an allocation wrote %zu bytes of their destination", bad);
    memset(big, 0x3c, anbytes);
    CHECK_STATUS(gas_get(big, mid, anbytes - 99), GAS_ERR_BOUNDS);
    bad = 0;
    for (size_t i = 0; i < anbytes; i++)
        bad += big[i] != 0x3c;
    CHECK(bad == 0, "a failed get of %" PRIu64 " B (past the end, over every owner) wrote %zu bytes of its "
          "destination", anbytes - 99, bad);
    free(big);
    /* the bytes just before the end are the reference pattern still (checked by owners too) */
    uint8_t tail[16];
    CHECK_OK(gas_get(tail, p, 16));
    check_pattern("the last 16 bytes of the array after failed puts past its end", tail, 16, 77, 0, near_end, near_end);
}

static void case_align(void)
{
    uint64_t res = 0, buf[4] = { 5, 6, 7, 8 };
    gas_ptr_t w = test_at(arr, (uint64_t)next * APART + 128); /* 8-aligned, on the next rank */
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, test_at(arr, (uint64_t)next * APART + 129), 1, 0, &res), GAS_ERR_ALIGN);
    check_last_error("gas_amo");
    CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, test_at(arr, (uint64_t)next * APART + 132), 1, 0, NULL), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_amo(GAS_AMO_ADD, 4, test_at(arr, (uint64_t)next * APART + 129), 1, 0, NULL), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_amo(GAS_AMO_SWAP, 4, test_at(arr, (uint64_t)next * APART + 130), 1, 0, &res), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_FETCH_ADD, 8, test_at(arr, (uint64_t)next * APART + 131), 1, 0, &res),
                 GAS_ERR_ALIGN);
    uint32_t o32 = 0;
    CHECK_STATUS(gas_atomic_fetch_add_u32(test_at(arr, (uint64_t)next * APART + 133), 1, &o32), GAS_ERR_ALIGN);
    check_last_error("gas_amo (fetch_add, 32-bit)"); /* a typed wrapper's error names its op */
    CHECK_STATUS(gas_atomic_cswap_u64(test_at(arr, (uint64_t)next * APART + 135), 0, 1, &res), GAS_ERR_ALIGN);
    check_last_error("gas_amo (cswap, 64-bit)");
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_XOR, 4, test_at(arr, (uint64_t)next * APART + 134), 1, 0, NULL),
                 GAS_ERR_ALIGN);
    check_last_error("gas_amo_nbi (xor, 32-bit)");
    /* a misaligned signal word: the payload is not written either */
    CHECK_STATUS(gas_put_signal(test_at(arr, (uint64_t)next * APART + 256), buf, 32,
                                test_at(arr, (uint64_t)next * APART + 129), 1, GAS_SIGNAL_ADD), GAS_ERR_ALIGN);
    check_last_error("gas_put_signal");
    CHECK_STATUS(gas_put_signal_nbi(test_at(arr, (uint64_t)next * APART + 256), buf, 32,
                                    test_at(arr, (uint64_t)next * APART + 132), 1, GAS_SIGNAL_SET), GAS_ERR_ALIGN);
    /* Misaligned is GAS_ERR_ALIGN whatever else is wrong with the word (gas.h, Atomics):
     * at the end of the array, where the word also runs past it, and on a rank the job
     * does not have.  Before, the range was checked first (GAS_ERR_BOUNDS, GAS_ERR_RANK). */
    gas_ptr_t end4 = test_at(arr, anbytes - 4), end2 = test_at(arr, anbytes - 2);
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, end4, 1, 0, &res), GAS_ERR_ALIGN);
    check_last_error("gas_amo");
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_ADD, 8, end4, 1, 0, NULL), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_amo(GAS_AMO_SET, 4, end2, 1, 0, NULL), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_atomic_fetch_add_u64(end4, 1, &res), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_atomic_cswap_u32(end2, 0, 1, &o32), GAS_ERR_ALIGN);
    CHECK_STATUS(gas_put_signal(test_at(arr, (uint64_t)next * APART + 256), buf, 32, end4, 1,
                                GAS_SIGNAL_ADD), GAS_ERR_ALIGN);
    check_last_error("gas_put_signal");
    /* the aligned word before them is in bounds: those errors were not about the array */
    CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, test_at(arr, anbytes - 8), 0, 0, NULL), GAS_OK);
    unsigned rb = gas_ptr_split_.rank_bits;
    if (rb < 63 && (uint64_t)n < (UINT64_C(1) << rb)) {
        gas_ptr_t norank = gas_ptr_make(n, gas_ptr_offset(w) + 4);
        CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, norank, 1, 0, NULL), GAS_ERR_ALIGN);
        CHECK_STATUS(gas_put_signal(test_at(arr, (uint64_t)next * APART + 256), buf, 8, norank, 1,
                                    GAS_SIGNAL_SET), GAS_ERR_ALIGN);
        CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, gas_ptr_make(n, gas_ptr_offset(w)), 1, 0, NULL),
                     GAS_ERR_RANK);
    }
    CHECK_OK(gas_quiet());
}

/*
 * A failed _nb call writes GAS_HANDLE_NULL through handle_p (gas.h), so that
 * waiting on the handle of a failed call returns at once: before, *handle_p
 * kept what it held (here a garbage value, which gas_wait would have used).
 * Collective _nb calls are refused the same way on every rank (they still
 * count as the team's next collective, identically everywhere).
 */
static void case_handles(void)
{
    uint64_t buf[4] = {0};
    gas_handle_t garbage = (gas_handle_t)(uintptr_t)0x5a5a5a50;
    gas_ptr_t past = test_at(arr, anbytes - 8);
    struct {
        const char *what;
        gas_status_t got, want;
        gas_handle_t h;
    } c[6];
    int k = 0;
    for (int i = 0; i < 6; i++)
        c[i].h = garbage;
    c[k].what = "gas_put_nb past the end";
    c[k].want = GAS_ERR_BOUNDS;
    c[k].got = gas_put_nb(past, buf, 32, &c[k].h);
    k++;
    c[k].what = "gas_get_nb with a NULL destination";
    c[k].want = GAS_ERR_INVALID;
    c[k].got = gas_get_nb(NULL, test_at(arr, 64), 8, &c[k].h);
    k++;
    c[k].what = "gas_get_nb past the end";
    c[k].want = GAS_ERR_BOUNDS;
    c[k].got = gas_get_nb(buf, past, 32, &c[k].h);
    k++;
    c[k].what = "gas_allreduce_nb with a bitwise op on doubles";
    c[k].want = GAS_ERR_INVALID;
    c[k].got = gas_allreduce_nb(GAS_TEAM_WORLD, buf, buf + 2, 1, GAS_DOUBLE, GAS_OP_BXOR, &c[k].h);
    k++;
    c[k].what = "gas_broadcast_nb with a root outside the team";
    c[k].want = GAS_ERR_RANK;
    c[k].got = gas_broadcast_nb(GAS_TEAM_WORLD, buf, 1, GAS_UINT64, n, &c[k].h);
    k++;
    c[k].what = "gas_team_barrier_nb on GAS_TEAM_NULL";
    c[k].want = GAS_ERR_INVALID;
    c[k].got = gas_team_barrier_nb(GAS_TEAM_NULL, &c[k].h);
    k++;
    for (int i = 0; i < k; i++) {
        CHECK(c[i].got == c[i].want, "%s returned %s, want %s", c[i].what, gas_strerror(c[i].got),
              gas_strerror(c[i].want));
        if (!CHECK(c[i].h == GAS_HANDLE_NULL, "%s failed and left *handle_p %p, not GAS_HANDLE_NULL",
                   c[i].what, (void *)c[i].h))
            continue;   /* (never wait on garbage) */
        CHECK_OK(gas_wait(c[i].h));
        int done = 0;
        CHECK(gas_test(c[i].h, &done) == GAS_OK && done == 1, "gas_test on the handle of a failed "
              "%s: done %d", c[i].what, done);
    }
    CHECK_OK(gas_quiet());
}

/*
 * Purely local calls with a NULL output pointer: each must return its status
 * without writing through it (a crash fails the test).  They once ran in a
 * forked child to survive such a crash, but a child that fork() made cannot
 * use libgas (gas.h, gas_init).
 */
static gas_ptr_t null_out_ptr;
static gas_status_t call_ptr_add_null(void) { return gas_ptr_add(null_out_ptr, 8, NULL); }
static gas_status_t call_layout_null(void) { return gas_layout(null_out_ptr, NULL); }
static gas_status_t call_test_null(void) { return gas_test(GAS_HANDLE_NULL, NULL); }

static void check_null_out(const char *call, gas_status_t (*fn)(void), gas_status_t want)
{
    gas_status_t got = fn();
    CHECK(got == want, "%s returned %d (%s), expected %d (%s)", call, (int)got, gas_strerror(got), (int)want,
          gas_strerror(want));
}

static void case_invalid_args(void)
{
    uint64_t res = 0, buf[4] = { 0 };
    gas_ptr_t w = test_at(arr, (uint64_t)next * APART + 64);
    gas_handle_t h = GAS_HANDLE_NULL;
    /* widths and ops */
    CHECK_STATUS(gas_amo(GAS_AMO_ADD, 3, w, 1, 0, NULL), GAS_ERR_INVALID);
    check_last_error("gas_amo");
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH, 0, w, 0, 0, &res), GAS_ERR_INVALID);
    CHECK_STATUS(gas_amo(GAS_AMO_FETCH, 16, w, 0, 0, &res), GAS_ERR_INVALID);
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_ADD, 3, w, 1, 0, NULL), GAS_ERR_INVALID);
    CHECK_STATUS(gas_amo(GAS_AMO_OP_COUNT, 8, w, 1, 0, &res), GAS_ERR_INVALID);
    CHECK_STATUS(gas_amo((gas_amo_op_t)100, 8, w, 1, 0, &res), GAS_ERR_INVALID);
    CHECK_STATUS(gas_amo_nbi(GAS_AMO_OP_COUNT, 4, w, 1, 0, &res), GAS_ERR_INVALID);
    CHECK_STATUS(gas_put_signal(w, buf, 8, test_at(arr, (uint64_t)next * APART + 8), 1, (gas_signal_op_t)7),
                 GAS_ERR_INVALID);
    /* fetching ops without a result pointer: error, and the word is not changed */
    static const gas_amo_op_t fetching[] = { GAS_AMO_FETCH, GAS_AMO_SWAP, GAS_AMO_CSWAP, GAS_AMO_FETCH_ADD,
                                             GAS_AMO_FETCH_AND, GAS_AMO_FETCH_OR, GAS_AMO_FETCH_XOR };
    for (size_t k = 0; k < sizeof fetching / sizeof fetching[0]; k++) {
        CHECK_STATUS(gas_amo(fetching[k], 8, w, 0x77, 0x20202020, NULL), GAS_ERR_INVALID);
        CHECK_STATUS(gas_amo_nbi(fetching[k], 4, w, 0x77, 0x20202020, NULL), GAS_ERR_INVALID);
    }
    check_last_error("gas_amo_nbi");
    /* non-fetching ops ignore result_p, NULL or not (ADD 0 / OR 0: no change) */
    CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, w, 0, 0, NULL), GAS_OK);
    CHECK_STATUS(gas_amo(GAS_AMO_OR, 4, w, 0, 0, &res), GAS_OK);
    /* NULL buffers with a nonzero length */
    CHECK_STATUS(gas_put(w, NULL, 8), GAS_ERR_INVALID);
    check_last_error("gas_put");
    CHECK_STATUS(gas_get(NULL, w, 8), GAS_ERR_INVALID);
    check_last_error("gas_get");
    CHECK_STATUS(gas_put_nbi(w, NULL, 8), GAS_ERR_INVALID);
    CHECK_STATUS(gas_get_nbi(NULL, w, 8), GAS_ERR_INVALID);
    CHECK_STATUS(gas_put_nb(w, NULL, 8, &h), GAS_ERR_INVALID);
    CHECK_STATUS(gas_get_nb(NULL, w, 8, &h), GAS_ERR_INVALID);
    CHECK_STATUS(gas_iput(w, NULL, 1, 1, 8, 2), GAS_ERR_INVALID);
    CHECK_STATUS(gas_iget(NULL, w, 1, 1, 8, 2), GAS_ERR_INVALID);
    CHECK_STATUS(gas_put_signal(w, NULL, 8, test_at(arr, (uint64_t)next * APART + 8), 1, GAS_SIGNAL_SET),
                 GAS_ERR_INVALID);
    /* NULL output pointers (the purely local calls run in a child process: a crash there is
       reported without ending this rank) */
    CHECK_STATUS(gas_put_nb(w, buf, 8, NULL), GAS_ERR_INVALID);
    CHECK_STATUS(gas_get_nb(buf, w, 8, NULL), GAS_ERR_INVALID);
    null_out_ptr = w;
    check_null_out("gas_ptr_add(p, 8, NULL)", call_ptr_add_null, GAS_ERR_INVALID);
    check_null_out("gas_layout(p, NULL)", call_layout_null, GAS_ERR_INVALID);
    check_null_out("gas_test(GAS_HANDLE_NULL, NULL)", call_test_null, GAS_ERR_INVALID);
    /* strides must be >= 1 */
    CHECK_STATUS(gas_iput(w, buf, 0, 1, 8, 2), GAS_ERR_INVALID);
    CHECK_STATUS(gas_iget(buf, w, 1, 0, 8, 2), GAS_ERR_INVALID);
    /* invalid comparisons and ivars of gas_wait_until (must not block) */
    uint64_t *mine = gas_ptr_local(gas_layout_ptr(&al, (uint64_t)me * APART + 64));
    CHECK_STATUS(gas_wait_until_u64(mine, (gas_cmp_t)42, 0), GAS_ERR_INVALID);
    check_last_error("gas_wait_until");
    CHECK_STATUS(gas_wait_until_i64((const int64_t *)mine, (gas_cmp_t)-1, 0), GAS_ERR_INVALID);
    CHECK_STATUS(gas_wait_until_u32((const uint32_t *)mine, (gas_cmp_t)(GAS_CMP_LE + 1), 0), GAS_ERR_INVALID);
    CHECK_STATUS(gas_wait_until_i32((const int32_t *)mine, (gas_cmp_t)6, 0), GAS_ERR_INVALID);
    CHECK_STATUS(gas_wait_until_u64(NULL, GAS_CMP_EQ, 0), GAS_ERR_INVALID);
    CHECK_OK(gas_quiet());
}

/* The fetching-without-result case must not have changed the word. */
static void check_word_untouched(void)
{
    uint64_t v = 0, want;
    uint8_t b[8];
    CHECK_OK(gas_get(&v, test_at(arr, (uint64_t)me * APART + 64), 8));
    pattern_fill(b, 8, 77, 0, (uint64_t)me * APART + 64);
    memcpy(&want, b, 8);
    CHECK(v == want, "a word hit by failed atomics (bad width/op, fetching op without result) changed from "
          "0x%016" PRIx64 " to 0x%016" PRIx64, want, v);
}

static void case_zero_length(void)
{
    gas_handle_t h = GAS_HANDLE_NULL;
    gas_ptr_t junk = gas_ptr_make(n - 1, 3) ^ UINT64_C(0x5a5a5a5a5a5a5a5a);
    CHECK_STATUS(gas_put(GAS_NULL, NULL, 0), GAS_OK);
    CHECK_STATUS(gas_get(NULL, GAS_NULL, 0), GAS_OK);
    CHECK_STATUS(gas_put(junk, NULL, 0), GAS_OK);
    CHECK_STATUS(gas_get((void *)(uintptr_t)16, junk, 0), GAS_OK);
    CHECK_STATUS(gas_put_nbi(junk, NULL, 0), GAS_OK);
    CHECK_STATUS(gas_get_nbi(NULL, junk, 0), GAS_OK);
    if (CHECK_STATUS(gas_put_nb(junk, NULL, 0, &h), GAS_OK))
        CHECK_OK(gas_wait(h));
    h = GAS_HANDLE_NULL;
    if (CHECK_STATUS(gas_get_nb(NULL, junk, 0, &h), GAS_OK))
        CHECK_OK(gas_wait(h));
    CHECK_STATUS(gas_iput(junk, NULL, 1, 1, 8, 0), GAS_OK);
    CHECK_STATUS(gas_iget(NULL, junk, 1, 1, 8, 0), GAS_OK);
    if ((uint64_t)n < (UINT64_C(1) << gas_ptr_split_.rank_bits))
        CHECK_STATUS(gas_put(gas_ptr_make(n, 64), NULL, 0), GAS_OK);
    CHECK_OK(gas_quiet());
}

static void case_huge(void)
{
    uint8_t buf[64];
    gas_handle_t h = GAS_HANDLE_NULL;
    gas_ptr_t p = test_at(arr, (uint64_t)next * APART + 8);
    const size_t huge[] = { SIZE_MAX, SIZE_MAX / 2, SIZE_MAX - 7, (size_t)1 << 62 };
    memset(buf, 0x3c, sizeof buf);
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        size_t len = huge[k];
        CHECK_EITHER(gas_put(p, buf, len), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_get(buf, p, len), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_put_nbi(p, buf, len), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_get_nbi(buf, p, len), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_put_nb(p, buf, len, &h), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_get_nb(buf, p, len, &h), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
        CHECK_EITHER(gas_put_signal(p, buf, len, test_at(arr, (uint64_t)next * APART + 64), 1, GAS_SIGNAL_ADD),
                     GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
    }
    check_last_error("gas_put_signal");
    /* strided shapes whose byte span overflows */
    CHECK_EITHER(gas_iput(p, buf, 1, 1, SIZE_MAX / 2, 3), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
    CHECK_EITHER(gas_iput(p, buf, SIZE_MAX / 4, 1, 8, 8), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
    CHECK_EITHER(gas_iget(buf, p, 1, SIZE_MAX / 4, 8, 8), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
    CHECK_EITHER(gas_iget(buf, p, 1, 1, 8, SIZE_MAX / 4), GAS_ERR_BOUNDS, GAS_ERR_OVERFLOW);
    CHECK_OK(gas_quiet());
    size_t bad = 0;
    for (size_t i = 0; i < sizeof buf; i++)
        bad += buf[i] != 0x3c;
    CHECK(bad == 0, "failed huge gets wrote %zu bytes of their destination", bad);
}

/* Collective: every rank must have the same pointer (through a put/get exchange). */
static void check_same_pointer(gas_ptr_t p, const char *what)
{
    uint64_t *all = test_xmalloc(sizeof *all * (size_t)n);
    CHECK_OK(gas_put(test_at(ctl, (uint64_t)me * 8), &p, 8));
    MUST(gas_barrier());
    CHECK_OK(gas_get(all, ctl, (size_t)n * 8));
    for (int r = 0; r < n; r++)
        CHECK(all[r] == p, "%s: rank %d got 0x%016" PRIx64 ", I got 0x%016" PRIx64, what, r, all[r], p);
    MUST(gas_barrier());
    free(all);
}

static void case_malloc(void)
{
    gas_ptr_t p = 12345, q = GAS_NULL;
    const gas_ptr_split_t *s = &gas_ptr_split_;
    uint64_t seg = s->segment_size;
    /* larger than the segment */
    if (seg <= (SIZE_MAX - 4096) / (size_t)n - 4096) {
        size_t too_big = (size_t)(seg + 4096) * (size_t)n;
        CHECK_STATUS(gas_malloc(too_big, &p), GAS_ERR_NOSPACE);
        check_last_error("gas_malloc");
        CHECK(p == 12345, "a failed gas_malloc wrote its output pointer (0x%016" PRIx64 ")", p);
    }
    /* a size whose per-rank share cannot be computed or mapped */
    CHECK_EITHER(gas_malloc(SIZE_MAX, &p), GAS_ERR_NOSPACE, GAS_ERR_OVERFLOW);
    CHECK_EITHER(gas_malloc_dist(UINT64_C(1) << 40, (size_t)1 << 40, GAS_DIST_BLOCK, 0, &p), GAS_ERR_OVERFLOW,
                 GAS_ERR_NOSPACE);
    still_usable("gas_malloc larger than the segment");
    /* the heap still works: a small allocation, the same everywhere, usable */
    if (CHECK_OK(gas_malloc((size_t)n * 64, &q))) {
        check_same_pointer(q, "gas_malloc after a failed one");
        uint64_t v = 0xabc0 + (uint64_t)me, got = 0;
        CHECK_OK(gas_put(test_at(q, (uint64_t)next * 64 + 8), &v, 8));
        MUST(gas_barrier());
        CHECK_OK(gas_get(&got, test_at(q, (uint64_t)me * 64 + 8), 8));
        CHECK(got == 0xabc0 + (uint64_t)prev, "put/get through the allocation made after a failed gas_malloc: "
              "got 0x%" PRIx64 ", expected 0x%" PRIx64, got, 0xabc0 + (uint64_t)prev);
        MUST(gas_barrier());
        /* gas_free of pointers that are not an allocation base */
        CHECK_EITHER(gas_free(test_at(q, 8)), GAS_ERR_INVALID, GAS_ERR_BOUNDS);
        check_last_error("gas_free");
        CHECK_EITHER(gas_free(gas_ptr_make(0, gas_ptr_offset(q) + 8)), GAS_ERR_INVALID, GAS_ERR_BOUNDS);
        still_usable("gas_free of a pointer inside an allocation");
        CHECK_OK(gas_get(&got, test_at(q, (uint64_t)me * 64 + 8), 8));
        CHECK(got == 0xabc0 + (uint64_t)prev, "after a failed gas_free, the array's contents changed: got 0x%" PRIx64,
              got);
        CHECK_OK(gas_free(q));
        CHECK_EITHER(gas_free(q), GAS_ERR_INVALID, GAS_ERR_BOUNDS);
        still_usable("gas_free of a freed array");
    }
    /* different arguments on different ranks */
    if (n >= 2) {
        p = 12345;
        CHECK_STATUS(gas_malloc(me == 0 ? 1024 : 2048, &p), GAS_ERR_INVALID);
        check_last_error("gas_malloc");
        CHECK(p == 12345, "a failed gas_malloc wrote its output pointer");
        still_usable("gas_malloc with different sizes on different ranks");
        CHECK_STATUS(gas_malloc((size_t)4096 + 8 * (size_t)(me % 2), &p), GAS_ERR_INVALID);
        CHECK_STATUS(gas_malloc_dist(100, 8, me == n - 1 ? GAS_DIST_CYCLIC : GAS_DIST_BLOCK, 1, &p), GAS_ERR_INVALID);
        CHECK_STATUS(gas_malloc_dist(100, me == 0 ? 8 : 4, GAS_DIST_BLOCK, 1, &p), GAS_ERR_INVALID);
        CHECK_STATUS(gas_malloc_dist(100, 8, GAS_DIST_BLOCK_CYCLIC, me == 0 ? 2 : 4, &p), GAS_ERR_INVALID);
        still_usable("gas_malloc_dist with different arguments on different ranks");
        /* a NULL array_p on one rank: that rank says so, the others that the ranks
         * differ, and nobody allocates (the next calls still line up) */
        p = 12345;
        CHECK_STATUS(gas_malloc(4096, me == n - 1 ? NULL : &p), GAS_ERR_INVALID);
        CHECK(strstr(gas_last_error(), me == n - 1 ? "array_p is NULL" : "NULL array_p") != NULL,
              "gas_malloc with a NULL array_p on rank %d: message \"%s\"", n - 1, gas_last_error());
        CHECK(p == 12345, "gas_malloc beside a NULL array_p wrote its output pointer");
        gas_team_t nt = GAS_TEAM_NULL;
        CHECK_STATUS(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, me == 0 ? NULL : &nt),
                     GAS_ERR_INVALID);
        CHECK(nt == GAS_TEAM_NULL, "gas_team_split_strided beside a NULL team_p made a team");
        /* a bad color on one rank: every rank fails (the others do not wait for it) */
        CHECK_STATUS(gas_team_split_color(GAS_TEAM_WORLD, me == n - 1 ? -5 : 0, 0, &nt),
                     GAS_ERR_INVALID);
        CHECK(nt == GAS_TEAM_NULL, "gas_team_split_color beside a bad color made a team");
        still_usable("gas_malloc and gas_team_split_strided with a NULL output on one rank");
    }
    /* invalid arguments to the allocators, the same on every rank */
    CHECK_STATUS(gas_malloc_dist(100, 8, (gas_dist_t)7, 1, &p), GAS_ERR_INVALID);
    CHECK_STATUS(gas_malloc_dist(100, 8, GAS_DIST_BLOCK_CYCLIC, 0, &p), GAS_ERR_INVALID);
    CHECK_STATUS(gas_malloc(64, NULL), GAS_ERR_INVALID);
    still_usable("gas_malloc_dist with invalid arguments");
    /* gas_dealloc twice, right away: refused, and the block is not handed out twice
     * (every size: the thread cache's, jemalloc's small and large classes, big blocks) */
    static const size_t twice[] = {64, 4096, 8192, 20000, 100000, 1000000, (size_t)2 << 20};
    for (size_t k = 0; k < sizeof twice / sizeof twice[0]; k++) {
        gas_ptr_t a = GAS_NULL, b = GAS_NULL, c = GAS_NULL;
        if (!CHECK_OK(gas_alloc(twice[k], &a)))
            continue;
        CHECK_OK(gas_dealloc(a));
        CHECK_STATUS(gas_dealloc(a), GAS_ERR_INVALID);
        CHECK(strstr(gas_last_error(), "freed already") != NULL,
              "gas_dealloc twice (%zu bytes): message \"%s\"", twice[k], gas_last_error());
        CHECK_OK(gas_alloc(twice[k], &b));
        CHECK_OK(gas_alloc(twice[k], &c));
        CHECK(b != c, "after gas_dealloc twice, two gas_allocs of %zu bytes got the same block",
              twice[k]);
        CHECK_OK(gas_dealloc(b));
        CHECK_OK(gas_dealloc(c));
    }
    /* gas_dealloc twice long after the first (many blocks of its size freed in
     * between), and gas_dealloc of a pointer inside a live block: both refused,
     * and no later allocation hands out a block that overlaps a live one */
    static const size_t later[] = {48, 4096, 40000};
    for (size_t k = 0; k < sizeof later / sizeof later[0]; k++) {
        enum { MANY = 40 };
        gas_ptr_t first = GAS_NULL, many[MANY], live[2 * MANY];
        if (!CHECK_OK(gas_alloc(later[k], &first)))
            continue;
        for (int i = 0; i < MANY; i++)
            CHECK_OK(gas_alloc(later[k], &many[i]));
        CHECK_OK(gas_dealloc(first));
        for (int i = 0; i < MANY; i++)
            CHECK_OK(gas_dealloc(many[i]));
        CHECK_STATUS(gas_dealloc(first), GAS_ERR_INVALID);
        int nlive = 0;
        for (int i = 0; i < 2 * MANY; i++)
            if (CHECK_OK(gas_alloc(later[k], &live[nlive])))
                nlive++;
        gas_ptr_t inner = GAS_NULL;
        CHECK_OK(gas_ptr_add(live[0], 8, &inner));
        CHECK_STATUS(gas_dealloc(inner), GAS_ERR_INVALID);
        CHECK(strstr(gas_last_error(), "not the start of a block") != NULL,
              "gas_dealloc inside a block (%zu bytes): message \"%s\"", later[k], gas_last_error());
        for (int i = 0; i < nlive; i++)
            for (int j = i + 1; j < nlive; j++)
                if (live[i] < live[j] ? live[i] + later[k] > live[j]
                                      : live[j] + later[k] > live[i]) {
                    FAIL("two live %zu-byte blocks overlap: 0x%" PRIx64 " and 0x%" PRIx64,
                          later[k], live[i], live[j]);
                    i = j = nlive;
                }
        for (int i = 0; i < nlive; i++)
            CHECK_OK(gas_dealloc(live[i]));
    }
    /* an element index whose byte offset overflows is out of bounds, not element 0 */
    gas_ptr_t r = 777;
    CHECK_STATUS(gas_ptr_index(ctl, 8, UINT64_C(1) << 61, &r), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_ptr_index(ctl, 16, (UINT64_C(1) << 60) + 3, &r), GAS_ERR_BOUNDS);
    CHECK(r == 777, "a failed gas_ptr_index wrote its result (0x%016" PRIx64 ")", r);
    /* and the heap still gives the same pointer everywhere */
    if (CHECK_OK(gas_malloc(1000, &q))) {
        check_same_pointer(q, "gas_malloc after the failed ones");
        CHECK_OK(gas_free(q));
    }
}

static void check_strerror(void)
{
    static const gas_status_t all[] = { GAS_OK, GAS_INPROGRESS, GAS_ERR_INVALID, GAS_ERR_RANK, GAS_ERR_BOUNDS,
                                        GAS_ERR_ALIGN, GAS_ERR_NOT_INIT, GAS_ERR_UNSUPPORTED, GAS_ERR_OVERFLOW,
                                        GAS_ERR_NOMEM, GAS_ERR_NOSPACE, GAS_ERR_AGAIN, GAS_ERR_TIMEOUT,
                                        GAS_ERR_PEER, GAS_ERR_IO, GAS_ERR_BOOTSTRAP, GAS_ERR_INTERNAL };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        const char *s = gas_strerror(all[k]);
        CHECK(s != NULL && s[0] != '\0', "gas_strerror(%d) is %s", (int)all[k], s ? "empty" : "NULL");
    }
}

int main(void)
{
    test_begin("bad_input");
    me = t_rank;
    n = t_nranks;
    next = (me + 1) % n;
    prev = (me + n - 1) % n;
    const char *mode = getenv("GAS_ERRORS");
    if (!mode || strcmp(mode, "return") != 0)
        test_die("this test needs GAS_ERRORS=return");
    check_strerror();
    MUST(gas_malloc((size_t)n * 8, &ctl));
    anbytes = (uint64_t)n * APART;
    MUST(gas_malloc(anbytes, &arr));
    al = test_layout_of(arr);
    if (!CHECK(al.block == APART, "gas_malloc(%" PRIu64 "): block %" PRIu64, anbytes, al.block))
        test_die("unexpected layout");
    uint8_t *mine = gas_ptr_local(gas_layout_ptr(&al, (uint64_t)me * APART));
    if (!mine)
        test_die("gas_ptr_local of my own part is NULL");
    pattern_fill(mine, APART, 77, 0, (uint64_t)me * APART);
    MUST(gas_barrier());
    CHECK(gas_last_error() != NULL, "gas_last_error() returned NULL");

    case_rank();
    still_usable("rank out of range");
    case_outside();
    still_usable("pointers outside any allocation");
    case_past_end();
    still_usable("ranges past the end of an allocation");
    case_align();
    still_usable("misaligned atomics");
    if (t_nranks > 1) {
        /* an 8-byte atomic over 4-byte cyclic elements spans two owners: said so */
        gas_ptr_t cyc;
        MUST(gas_malloc_dist(64, 4, GAS_DIST_CYCLIC, 0, &cyc));
        CHECK_STATUS(gas_amo(GAS_AMO_ADD, 8, cyc, 1, 0, NULL), GAS_ERR_ALIGN);
        CHECK(strstr(gas_last_error(), "spans two owners") != NULL,
              "an atomic across two owners: message \"%s\"", gas_last_error());
        MUST(gas_barrier());
        MUST(gas_free(cyc));
    }
    case_invalid_args();
    still_usable("invalid arguments");
    case_handles();
    still_usable("failed _nb calls");
    check_word_untouched();
    case_zero_length();
    still_usable("zero-length transfers");
    case_huge();
    still_usable("huge lengths");
    case_malloc();
    still_usable("allocation errors");

    CHECK_OK(gas_free(arr));
    CHECK_OK(gas_free(ctl));
    return test_end();
}
