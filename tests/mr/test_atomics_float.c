/*
 * test_atomics_float - gas_atomic_{fetch,set,swap}_{f32,f64} move a value's
 * bits exactly, between every pair of ranks, and swaps are atomic.
 *
 * (1) Each rank sets, on the next rank's words, values that a conversion
 *     through an integer or a float compare would change: NaNs with payloads
 *     (quiet and signalling bits), -0.0, the smallest subnormal, the largest
 *     finite value, infinity; after a barrier the owner reads them with plain
 *     loads and every rank fetches them atomically: bit for bit what was set.
 * (2) Swap chains: every rank swaps ITER distinct values (rank and step in
 *     the bits, some of them NaNs and -0.0) into one f32 and one f64 word on
 *     rank 0; the values fetched by all ranks plus the final one are exactly
 *     the initial value and every swapped-in value, each once.
 * A 32-bit word's neighbour in its 8 bytes must stay untouched.
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>

enum { ITER = 200, NSPECIAL = 8 };

/* A value's bits and back (a union: C11 reads the other member as the same bytes). */
#define FBITS(T, U, x) (((union { T v; U u; }){.v = (x)}).u)
#define FOF(T, U, x) (((union { T v; U u; }){.u = (x)}).v)
#define f32_bits(x) FBITS(float, uint32_t, x)
#define f64_bits(x) FBITS(double, uint64_t, x)
#define f32_of(x) FOF(float, uint32_t, x)
#define f64_of(x) FOF(double, uint64_t, x)

/* Special value k of writer w (its bits carry w, so every pair is distinct). */
static uint64_t special64(int k, int w)
{
    static const uint64_t base[NSPECIAL] = {
        0x7ff8000000000000ull, /* quiet NaN, payload below */
        0x7ff0000000000001ull, /* signalling NaN */
        0x8000000000000000ull, /* -0.0 */
        0x0000000000000001ull, /* smallest subnormal */
        0x7fefffffffffffffull, /* largest finite */
        0x7ff0000000000000ull, /* infinity */
        0xfff8000000000000ull, /* negative quiet NaN */
        0x3ff0000000000000ull, /* 1.0 */
    };
    uint64_t v = base[k];
    if (k == 0 || k == 1 || k == 6)
        v |= (uint64_t)(w + 1) << 20;   /* a payload */
    else if (k == 3 || k == 7)
        v += (uint64_t)w;
    return v;
}
static uint32_t special32(int k, int w)
{
    static const uint32_t base[NSPECIAL] = {0x7fc00000u, 0x7f800001u, 0x80000000u, 0x00000001u,
                                            0x7f7fffffu, 0x7f800000u, 0xffc00000u, 0x3f800000u};
    uint32_t v = base[k];
    if (k == 0 || k == 1 || k == 6)
        v |= (uint32_t)(w + 1) << 8;
    else if (k == 3 || k == 7)
        v += (uint32_t)w;
    return v;
}

/* Swap value i of rank r (NaNs and -0.0 among them). */
static uint64_t swap64(int r, int i)
{
    if (i % 10 == 3)
        return 0x7ff8000000000000ull | (uint64_t)r << 32 | (uint64_t)i;   /* NaN */
    if (i % 10 == 7 && r == 0 && i == 7)
        return 0x8000000000000000ull;   /* -0.0, once */
    return f64_bits(1.0 + r * 1e6 + i);
}
static uint32_t swap32(int r, int i)
{
    if (i % 10 == 3)
        return 0x7fc00000u | (uint32_t)r << 12 | (uint32_t)i;   /* NaN (i < 4096) */
    if (i % 10 == 7 && r == 0 && i == 7)
        return 0x80000000u;
    return f32_bits((float)(1 + r * 1000 + i));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Per rank: NSPECIAL f64 words, NSPECIAL cells of {f32, sentinel u32}, the swap words. */
struct area {
    uint64_t d[NSPECIAL];
    uint32_t f[NSPECIAL][2];
    uint64_t swap_d;
    uint32_t swap_f[2];
};

static gas_ptr_t arr;

static gas_ptr_t at(int rank, size_t off)
{
    gas_ptr_t p = GAS_NULL;
    if (gas_ptr_add(arr, (uint64_t)rank * sizeof(struct area) + off, &p) != GAS_OK)
        test_die("gas_ptr_add");
    return p;
}

int main(void)
{
    test_begin("atomics_float");
    int me = t_rank, P = t_nranks, next = (me + 1) % P;
    MUST(gas_malloc(sizeof(struct area) * (uint64_t)P, &arr));
    struct area *mine = gas_ptr_local(at(me, 0));
    memset(mine, 0, sizeof *mine);
    for (int k = 0; k < NSPECIAL; k++)
        mine->f[k][1] = 0xa5a5a5a5u;   /* the sentinel next to each f32 */
    mine->swap_d = f64_bits(-1.5);
    mine->swap_f[0] = f32_bits(-1.5f);
    mine->swap_f[1] = 0xa5a5a5a5u;
    MUST(gas_barrier());

    /* (1) set on the next rank, read back by its owner and by everyone */
    for (int k = 0; k < NSPECIAL; k++) {
        CHECK_OK(gas_atomic_set_f64(at(next, offsetof(struct area, d) + 8 * (size_t)k),
                                    f64_of(special64(k, me))));
        CHECK_OK(gas_atomic_set_f32(at(next, offsetof(struct area, f) + 8 * (size_t)k),
                                    f32_of(special32(k, me))));
    }
    MUST(gas_barrier());
    int prev = (me + P - 1) % P;
    for (int k = 0; k < NSPECIAL; k++) {
        CHECK(mine->d[k] == special64(k, prev), "f64 word %d here: %#llx, rank %d set %#llx", k,
              (unsigned long long)mine->d[k], prev, (unsigned long long)special64(k, prev));
        CHECK(mine->f[k][0] == special32(k, prev), "f32 word %d here: %#x, rank %d set %#x", k,
              mine->f[k][0], prev, special32(k, prev));
        CHECK(mine->f[k][1] == 0xa5a5a5a5u, "f32 word %d: its neighbour became %#x", k,
              mine->f[k][1]);
    }
    for (int r = 0; r < P; r++)
        for (int k = 0; k < NSPECIAL; k++) {
            double d = 0;
            float f = 0;
            int w = (r + P - 1) % P;
            if (CHECK_OK(gas_atomic_fetch_f64(at(r, offsetof(struct area, d) + 8 * (size_t)k),
                                              &d)))
                CHECK(f64_bits(d) == special64(k, w), "fetch_f64 of rank %d's word %d: %#llx, "
                      "want %#llx", r, k, (unsigned long long)f64_bits(d),
                      (unsigned long long)special64(k, w));
            if (CHECK_OK(gas_atomic_fetch_f32(at(r, offsetof(struct area, f) + 8 * (size_t)k),
                                              &f)))
                CHECK(f32_bits(f) == special32(k, w), "fetch_f32 of rank %d's word %d: %#x, "
                      "want %#x", r, k, f32_bits(f), special32(k, w));
        }
    MUST(gas_barrier());

    /* (2) swap chains on rank 0's words */
    uint64_t *got_d = test_xmalloc(sizeof(uint64_t) * ITER);
    uint64_t *got_f = test_xmalloc(sizeof(uint64_t) * ITER);
    for (int i = 0; i < ITER; i++) {
        double od = 0;
        float of = 0;
        if (!CHECK_OK(gas_atomic_swap_f64(at(0, offsetof(struct area, swap_d)),
                                          f64_of(swap64(me, i)), &od)) ||
            !CHECK_OK(gas_atomic_swap_f32(at(0, offsetof(struct area, swap_f)),
                                          f32_of(swap32(me, i)), &of)))
            break;
        got_d[i] = f64_bits(od);
        got_f[i] = f32_bits(of);
    }
    gas_ptr_t all;
    MUST(gas_malloc(sizeof(uint64_t) * 2 * ITER * (uint64_t)P, &all));
    gas_ptr_t block = GAS_NULL;   /* this rank's block: 2 * ITER words */
    MUST(gas_ptr_add(all, (uint64_t)me * 2 * ITER * 8, &block));
    uint64_t *gathered = gas_ptr_local(block);
    if (gathered == NULL)
        test_die("gas_ptr_local of this rank's block");
    memcpy(gathered, got_d, sizeof(uint64_t) * ITER);
    memcpy(gathered + ITER, got_f, sizeof(uint64_t) * ITER);
    MUST(gas_barrier());
    if (me == 0) {
        size_t n = (size_t)ITER * (size_t)P + 1;
        uint64_t *seen_d = test_xmalloc(8 * n), *want_d = test_xmalloc(8 * n);
        uint64_t *seen_f = test_xmalloc(8 * n), *want_f = test_xmalloc(8 * n);
        for (int r = 0; r < P; r++) {
            gas_ptr_t src = GAS_NULL;
            MUST(gas_ptr_add(all, (uint64_t)r * 2 * ITER * 8, &src));
            uint64_t *buf = test_xmalloc(16 * ITER);
            MUST(gas_get(buf, src, 16 * ITER));
            for (int i = 0; i < ITER; i++) {
                seen_d[(size_t)r * ITER + (size_t)i] = buf[i];
                seen_f[(size_t)r * ITER + (size_t)i] = buf[ITER + i];
                want_d[(size_t)r * ITER + (size_t)i] = swap64(r, i);
                want_f[(size_t)r * ITER + (size_t)i] = swap32(r, i);
            }
            free(buf);
        }
        seen_d[n - 1] = mine->swap_d;
        seen_f[n - 1] = mine->swap_f[0];
        want_d[n - 1] = f64_bits(-1.5);
        want_f[n - 1] = f32_bits(-1.5f);
        CHECK(mine->swap_f[1] == 0xa5a5a5a5u, "the f32 swap word's neighbour became %#x",
              mine->swap_f[1]);
        qsort(seen_d, n, 8, cmp_u64);
        qsort(want_d, n, 8, cmp_u64);
        qsort(seen_f, n, 8, cmp_u64);
        qsort(want_f, n, 8, cmp_u64);
        for (size_t i = 0; i < n; i++) {
            if (!CHECK(seen_d[i] == want_d[i], "f64 swap chain: sorted value %zu is %#llx, want "
                       "%#llx (a value lost or seen twice)", i, (unsigned long long)seen_d[i],
                       (unsigned long long)want_d[i]))
                break;
        }
        for (size_t i = 0; i < n; i++) {
            if (!CHECK(seen_f[i] == want_f[i], "f32 swap chain: sorted value %zu is %#llx, want "
                       "%#llx (a value lost or seen twice)", i, (unsigned long long)seen_f[i],
                       (unsigned long long)want_f[i]))
                break;
        }
        free(seen_d);
        free(want_d);
        free(seen_f);
        free(want_f);
    }
    MUST(gas_barrier());
    free(got_d);
    free(got_f);
    MUST(gas_free(all));
    MUST(gas_free(arr));
    return test_end();
}
