/*
 * The heap/arena boundary (alloc/space.h): arenas carve aligned extents
 * downwards and never cross the limit; a proposed heap growth keeps arenas
 * above it until settled; a rollback gives the room back; several threads
 * carving at once never overlap and never cross a reservation made meanwhile.
 */
#include "alloc/space.h"
#include "unit.h"

#include <pthread.h>
#include <stdlib.h>

#define MiB (1ull << 20)

struct carve {
    struct gas_al_space *s;
    uint64_t off[4096], len[4096];
    int n;
};

static void *carver(void *arg)
{
    struct carve *c = arg;
    unsigned long long seed = (unsigned long long)(uintptr_t)arg | 1;
    for (int i = 0; i < 4096; i++) {
        uint64_t len = (1 + unit_rand(&seed) % 16) * 4096, prev;
        if (gas_al_space_take(c->s, len, 4096, &c->off[c->n], &prev) != 0)
            break;
        c->len[c->n++] = len;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    struct gas_al_space s;
    uint64_t off, prev, he, fl;
    gas_al_space_init(&s, 64 * 1024, 64 * MiB, NULL);
    UCHECK(gas_al_space_take(&s, 2 * MiB, 2 * MiB, &off, &prev) == 0 && off == 62 * MiB &&
           prev == 64 * MiB, "first extent at the top");
    UCHECK(gas_al_space_take(&s, 4096 * 3, 4096, &off, &prev) == 0 && off == 62 * MiB - 12288,
           "second extent just below");
    /* Alignment leaves a gap rather than crossing into it. */
    UCHECK(gas_al_space_take(&s, 4096, 1 * MiB, &off, &prev) == 0 && off == 61 * MiB, "aligned");
    /* Undo only when nothing was taken below since. */
    gas_al_space_untake(&s, off, prev);
    gas_al_space_get(&s, &he, &fl);
    UCHECK(fl == 62 * MiB - 12288 && he == 64 * 1024, "untake restored the floor");
    /* The heap proposes to grow to 32 MiB: the arenas' floor is above, so it is kept. */
    UCHECK(gas_al_space_reserve(&s, 32 * MiB) == 62 * MiB - 12288, "reserve returns the floor");
    UCHECK(gas_al_space_take(&s, 31 * MiB, 4096, &off, &prev) != 0, "arena crossed a reservation");
    UCHECK(gas_al_space_take(&s, 20 * MiB, 4096, &off, &prev) == 0, "arena above the reservation");
    gas_al_space_settle(&s, 32 * MiB);
    gas_al_space_get(&s, &he, &fl);
    UCHECK(he == 32 * MiB && fl >= 32 * MiB, "settled growth");
    /* A proposal above the floor is not kept; a rollback restores the old limit. */
    UCHECK(gas_al_space_reserve(&s, 60 * MiB) < 60 * MiB, "floor below a too-high proposal");
    UCHECK(gas_al_space_take(&s, 4096, 4096, &off, &prev) == 0, "arena still grows");
    gas_al_space_settle(&s, 32 * MiB);
    /* The heap shrinks: the arenas may use the space. */
    gas_al_space_settle(&s, 1 * MiB);
    gas_al_space_get(&s, NULL, &fl);
    UCHECK(gas_al_space_take(&s, fl - 1 * MiB, 4096, &off, &prev) == 0 && off == 1 * MiB,
           "arena fills down to the shrunk heap");
    UCHECK(gas_al_space_take(&s, 4096, 4096, &off, &prev) != 0, "full");
    gas_al_space_fini(&s);

    /* Threads carving at once, with a reservation in the middle of it. */
    uint64_t pub = 0;
    gas_al_space_init(&s, 64 * 1024, 256 * MiB, &pub);
    static struct carve c[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        c[i].s = &s;
        pthread_create(&th[i], NULL, carver, &c[i]);
    }
    uint64_t floor_seen = gas_al_space_reserve(&s, 128 * MiB);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    static uint64_t all[4 * 4096][2];
    int n = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < c[i].n; k++) {
            all[n][0] = c[i].off[k];
            all[n++][1] = c[i].len[k];
        }
    qsort(all, (size_t)n, sizeof all[0], cmp_u64);
    uint64_t lowest = 256 * MiB;
    for (int k = 0; k < n; k++) {
        UCHECK(all[k][0] % 4096 == 0 && all[k][0] + all[k][1] <= 256 * MiB, "extent out of bounds");
        if (k + 1 < n)
            UCHECK(all[k][0] + all[k][1] <= all[k + 1][0], "extents %d and %d overlap", k, k + 1);
        if (all[k][0] < lowest)
            lowest = all[k][0];
    }
    if (floor_seen >= 128 * MiB)
        UCHECK(lowest >= 128 * MiB, "an extent crossed the kept reservation (lowest %llu)",
               (unsigned long long)lowest);
    gas_al_space_get(&s, NULL, &fl);
    UCHECK(pub == fl, "published floor %llu, floor %llu", (unsigned long long)pub,
           (unsigned long long)fl);
    gas_al_space_fini(&s);
    return unit_finish("test_space");
}
