/*
 * test_put_get - every put flavour, read back with every get flavour.
 *
 * One block-distributed array of nranks parts; part r (owned by rank r) is cut
 * into nranks slices and writer w owns slice w of every part, so each rank
 * writes into every rank's memory (its own included) and no two writers touch
 * the same byte.  For each put flavour (gas_put, gas_put_nb + gas_wait,
 * gas_put_nb + gas_test loop, gas_put_nbi + gas_quiet, gas_iput) every rank
 * writes its slices, a barrier follows, and every rank reads the whole array
 * back with gas_get (per part and in one transfer spanning every owner),
 * gas_get_nb + gas_wait, gas_get_nbi + gas_quiet and gas_iget, comparing with
 * a reference image it computes locally; owners (and peers that map the
 * owner's segment) also check it by direct loads through gas_ptr_local().
 * Bytes outside the slices hold a fill value and must stay untouched.
 */
#include <sched.h>

#include "check.h"

enum { SLICE = 2056 };  /* bytes per slice; each writer writes SLICE - 3 of them */
enum { PUT_PLAIN, PUT_NB_WAIT, PUT_NB_TEST, PUT_NBI_QUIET, PUT_STRIDED, PUT_FLAVOURS };

static const char *put_names[PUT_FLAVOURS] = {
    "gas_put", "gas_put_nb+gas_wait", "gas_put_nb+gas_test", "gas_put_nbi+gas_quiet", "gas_iput"
};

static gas_ptr_t arr;
static gas_layout_t lay;
static uint64_t part;    /* bytes per part = nranks * SLICE */
static uint64_t nbytes;  /* nranks * part */

/* The tag that makes every (round, flavour, target part) pattern distinct. */
static int tag_of(int round, int flavour, int r)
{
    return (round * PUT_FLAVOURS + flavour) * 4096 + r;
}

static uint8_t fill_of(int round, int flavour)
{
    return (uint8_t)(0xc1 + 16 * round + flavour);
}

/* Writer w's contiguous slice in part r: [start, start + len). */
static uint64_t slice_start(int w, int r)
{
    return (uint64_t)r * part + (uint64_t)w * SLICE + 1;
}
static const uint64_t slice_len = SLICE - 3;

/* Element size that the strided flavour uses in part r. */
static size_t iput_elem(int r)
{
    static const size_t sizes[] = { 8, 4, 1, 3, 16 };
    return sizes[r % 5];
}

/* Writer w's elements in part r (strided flavour): j = w, w+n, w+2n, ... < P. */
static size_t iput_count(int w, int r)
{
    uint64_t p = part / iput_elem(r);
    if (p <= (uint64_t)w)
        return 0;
    return (size_t)((p - (uint64_t)w + (uint64_t)t_nranks - 1) / (uint64_t)t_nranks);
}

/* What every writer leaves in the array for this (round, flavour). */
static void build_reference(uint8_t *ref, int round, int flavour)
{
    memset(ref, fill_of(round, flavour), nbytes);
    for (int w = 0; w < t_nranks; w++) {
        for (int r = 0; r < t_nranks; r++) {
            int tag = tag_of(round, flavour, r);
            if (flavour != PUT_STRIDED) {
                pattern_fill(ref + slice_start(w, r), slice_len, w, tag, 0);
                continue;
            }
            size_t e = iput_elem(r), cnt = iput_count(w, r);
            for (size_t k = 0; k < cnt; k++)
                pattern_fill(ref + (uint64_t)r * part + ((uint64_t)w + k * (uint64_t)t_nranks) * e,
                             e, w, tag, k * e);
        }
    }
}

static void do_puts(int round, int flavour)
{
    int n = t_nranks, me = t_rank;
    uint8_t *bufs = test_xmalloc((size_t)n * SLICE * 2 + 64);
    gas_handle_t *h = test_xmalloc(sizeof *h * (size_t)n);

    for (int k = 0; k < n; k++) {
        int r = (me + k) % n; /* start with a different owner on every rank */
        int tag = tag_of(round, flavour, r);
        uint8_t *src = bufs + (size_t)k * SLICE;
        gas_ptr_t dst;
        h[k] = GAS_HANDLE_NULL;
        switch (flavour) {
        case PUT_PLAIN:
            pattern_fill(src, slice_len, me, tag, 0);
            dst = test_at(arr, slice_start(me, r));
            CHECK_OK(gas_put(dst, src, slice_len));
            memset(src, 0x77, slice_len); /* the source may be reused at return */
            break;
        case PUT_NB_WAIT:
        case PUT_NB_TEST:
            pattern_fill(src, slice_len, me, tag, 0);
            dst = test_at(arr, slice_start(me, r));
            CHECK_OK(gas_put_nb(dst, src, slice_len, &h[k]));
            memset(src, 0x77, slice_len); /* _nb put sources too may be reused at return */
            break;
        case PUT_NBI_QUIET:
            /* one buffer, overwritten at once: nbi sources may be reused at return */
            pattern_fill(bufs, slice_len, me, tag, 0);
            dst = test_at(arr, slice_start(me, r));
            CHECK_OK(gas_put_nbi(dst, bufs, slice_len));
            memset(bufs, 0x77, slice_len);
            break;
        case PUT_STRIDED: {
            size_t e = iput_elem(r), cnt = iput_count(me, r);
            /* source elements at stride 2; the gaps must not travel */
            memset(bufs, 0x5a, cnt * 2 * e + 1);
            for (size_t j = 0; j < cnt; j++)
                pattern_fill(bufs + j * 2 * e, e, me, tag, j * e);
            dst = test_at(arr, (uint64_t)r * part + (uint64_t)me * e);
            CHECK_OK(gas_iput(dst, bufs, (size_t)n, 2, e, cnt));
            break;
        }
        }
    }

    /* complete, then the writer itself must see its data (remote completion) */
    if (flavour == PUT_NB_WAIT) {
        for (int k = n - 1; k >= 0; k--)
            CHECK_OK(gas_wait(h[k]));
    } else if (flavour == PUT_NB_TEST) {
        for (int k = 0; k < n; k++) {
            int done = 0;
            long spins = 0;
            while (h[k] != GAS_HANDLE_NULL && !done) {
                if (!CHECK_OK(gas_test(h[k], &done)))
                    break;
                if (!done && (++spins & 63) == 0)
                    sched_yield();
            }
        }
    } else if (flavour == PUT_NBI_QUIET) {
        CHECK_OK(gas_quiet());
    }
    if (flavour == PUT_NB_WAIT || flavour == PUT_NB_TEST || flavour == PUT_NBI_QUIET) {
        uint8_t *back = bufs + (size_t)n * SLICE;
        char what[128];
        for (int r = 0; r < n; r++) {
            memset(back, 0, slice_len);
            CHECK_OK(gas_get(back, test_at(arr, slice_start(me, r)), slice_len));
            snprintf(what, sizeof what, "%s then gas_get by the writer, part %d", put_names[flavour], r);
            check_pattern(what, back, slice_len, me, tag_of(round, flavour, r), 0,
                          slice_start(me, r));
        }
    }
    free(h);
    free(bufs);
}

static void check_image(const char *how, const uint8_t *got, const uint8_t *ref, int flavour)
{
    char what[160];
    snprintf(what, sizeof what, "after %s, read with %s: array", put_names[flavour], how);
    check_bytes(what, got, ref, nbytes, 0);
}

static void do_gets(const uint8_t *ref, int flavour)
{
    int n = t_nranks, me = t_rank;
    uint8_t *buf = test_xmalloc(nbytes * 4 + 64);
    gas_handle_t *h = test_xmalloc(sizeof *h * (size_t)n * 2);
    char what[160];

    /* gas_get: per part, then the whole array in one transfer over every owner */
    memset(buf, 0, nbytes);
    for (int k = 0; k < n; k++) {
        int r = (me + k) % n;
        CHECK_OK(gas_get(buf + (uint64_t)r * part, test_at(arr, (uint64_t)r * part), part));
    }
    check_image("gas_get per part", buf, ref, flavour);
    memset(buf, 0, nbytes);
    CHECK_OK(gas_get(buf, arr, nbytes));
    check_image("gas_get of the whole array", buf, ref, flavour);

    /* gas_get_nb: every piece outstanding at once (each part in two pieces) */
    memset(buf, 0, nbytes);
    for (int k = 0; k < n; k++) {
        int r = (me + k) % n;
        uint64_t a = (uint64_t)r * part, cut = part / 3 + 1;
        CHECK_OK(gas_get_nb(buf + a, test_at(arr, a), cut, &h[2 * k]));
        CHECK_OK(gas_get_nb(buf + a + cut, test_at(arr, a + cut), part - cut, &h[2 * k + 1]));
    }
    for (int k = 0; k < 2 * n; k++)
        CHECK_OK(gas_wait(h[k]));
    check_image("gas_get_nb+gas_wait", buf, ref, flavour);

    /* gas_get_nbi + gas_quiet */
    memset(buf, 0, nbytes);
    for (int k = 0; k < n; k++) {
        int r = (me + n - k) % n;
        uint64_t a = (uint64_t)r * part, cut = part / 2 + 3;
        CHECK_OK(gas_get_nbi(buf + a + cut, test_at(arr, a + cut), part - cut));
        CHECK_OK(gas_get_nbi(buf + a, test_at(arr, a), cut));
    }
    CHECK_OK(gas_quiet());
    check_image("gas_get_nbi+gas_quiet", buf, ref, flavour);

    /* gas_iget: elements of e bytes, source stride ss, destination stride ds */
    static const struct { size_t e, ss, ds; } shapes[] = { { 8, 3, 2 }, { 5, 2, 3 }, { 1, 1, 4 } };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        size_t e = shapes[si].e, ss = shapes[si].ss, ds = shapes[si].ds;
        uint64_t total = nbytes / e;
        for (size_t s = 0; s < ss; s++) {
            size_t cnt = total > s ? (size_t)((total - s + ss - 1) / ss) : 0;
            memset(buf, 0xa5, cnt * ds * e + e);
            CHECK_OK(gas_iget(buf, test_at(arr, s * e), ds, ss, e, cnt));
            size_t bad = 0;
            for (size_t k = 0; k < cnt && bad < 4; k++) {
                const uint8_t *g = buf + k * ds * e, *w = ref + (s + k * ss) * e;
                if (memcmp(g, w, e) != 0) {
                    snprintf(what, sizeof what,
                             "after %s, gas_iget(elem %zu, src stride %zu, dst stride %zu) element %zu "
                             "(array offset %zu)", put_names[flavour], e, ss, ds, k, (s + k * ss) * e);
                    bad += check_bytes(what, g, w, e, (s + k * ss) * e) ? 1 : 0;
                }
                for (size_t gap = e; gap < ds * e; gap++)
                    if (g[gap] != 0xa5) {
                        FAIL("after %s, gas_iget(elem %zu, dst stride %zu) wrote into the gap after "
                             "element %zu (dst byte %zu: 0x%02x)", put_names[flavour], e, ds, k,
                             k * ds * e + gap, g[gap]);
                        bad++;
                        break;
                    }
            }
        }
    }

    /* direct loads: the owner always, other ranks where the segment is mapped */
    int mapped = 0;
    for (int r = 0; r < n; r++) {
        gas_ptr_t p = gas_layout_ptr(&lay, (uint64_t)r * part);
        const uint8_t *local = gas_ptr_local(p);
        if (r == me && !CHECK(local != NULL, "gas_ptr_local of my own part (rank %d offset %" PRIu64
                              ") is NULL", gas_ptr_rank(p), gas_ptr_offset(p)))
            continue;
        if (!local)
            continue;
        mapped++;
        snprintf(what, sizeof what, "after %s, direct load through gas_ptr_local of rank %d's part",
                 put_names[flavour], r);
        check_bytes(what, local, ref + (uint64_t)r * part, part, (uint64_t)r * part);
    }
    if (flavour == 0 && me == 0)
        test_note("rank 0 loads %d of %d parts directly", mapped, n);
    free(h);
    free(buf);
}

int main(void)
{
    test_begin("put_get");
    int n = t_nranks, me = t_rank;
    part = (uint64_t)n * SLICE;
    nbytes = (uint64_t)n * part;
    MUST(gas_malloc(nbytes, &arr));
    lay = test_layout_of(arr);
    CHECK(lay.block == part, "gas_malloc(%" PRIu64 ") on %d ranks: block %" PRIu64 ", expected %" PRIu64,
          nbytes, n, lay.block, part);
    for (int r = 0; r < n; r++) {
        gas_ptr_t p = test_at(arr, (uint64_t)r * part);
        CHECK(gas_ptr_rank(p) == r, "byte %" PRIu64 " of the array is on rank %d, expected %d",
              (uint64_t)r * part, gas_ptr_rank(p), r);
    }
    uint8_t *ref = test_xmalloc(nbytes);

    for (int round = 0; round < 2; round++) {
        for (int f = 0; f < PUT_FLAVOURS; f++) {
            /* every owner fills its own part with this round's fill byte */
            uint8_t *mine = gas_ptr_local(gas_layout_ptr(&lay, (uint64_t)me * part));
            if (!mine)
                test_die("gas_ptr_local of my own part is NULL");
            memset(mine, fill_of(round, f), part);
            MUST(gas_barrier());
            do_puts(round, f);
            MUST(gas_barrier());
            build_reference(ref, round, f);
            do_gets(ref, f);
            MUST(gas_barrier());
        }
    }
    free(ref);
    CHECK_OK(gas_free(arr));
    return test_end();
}
