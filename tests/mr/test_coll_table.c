/*
 * test_coll_table - the tuning table's choice (gas_coll_choice, the same
 * lookup the collectives use) against a reference read of the table's rule:
 * the last row that matches the collective, the team size and the node
 * shape and whose `from` is at most the call's bytes wins; the collective's
 * first algorithm when none matches.
 *
 * The test writes its own table (overlapping rank ranges, rules that only
 * match other team sizes or several nodes, rows out of `from` order, and
 * more than 16 distinct `from` values for gather, past what the library's
 * per-shape step functions hold), points GAS_COLL_TUNING at it before
 * gas_init, and checks every rule boundary (from - 1, from, from + 1) and a
 * spread of other sizes on the world team and on a split team of another
 * size.  Run with 3 ranks: teams of 3, 2 and 1.
 */
#include "check.h"

#include <unistd.h>

struct row {
    gas_coll_t coll;
    int rmin, rmax, multi;   /* multi: matches only teams on several nodes */
    uint64_t from;
    const char *alg;
};

static struct row rows[64];
static int nrows;

static void add(gas_coll_t c, int rmin, int rmax, int multi, uint64_t from, const char *alg)
{
    rows[nrows++] = (struct row){c, rmin, rmax, multi, from, alg};
}

static const char *reference(gas_coll_t c, int n, uint64_t bytes)
{
    const char *alg = gas_coll_algorithm(c, 1);
    for (int i = 0; i < nrows; i++)
        if (rows[i].coll == c && n >= rows[i].rmin && n <= rows[i].rmax && !rows[i].multi &&
            bytes >= rows[i].from)
            alg = rows[i].alg;
    return alg;
}

static void write_table(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        test_die("cannot write the tuning table");
    fprintf(f, "# test_coll_table\n");
    for (int i = 0; i < nrows; i++) {
        char ranks[32];
        if (rows[i].rmin == 1 && rows[i].rmax == 1 << 30)
            snprintf(ranks, sizeof ranks, "*");
        else if (rows[i].rmax == 1 << 30)
            snprintf(ranks, sizeof ranks, "%d-", rows[i].rmin);
        else if (rows[i].rmin == rows[i].rmax)
            snprintf(ranks, sizeof ranks, "%d", rows[i].rmin);
        else
            snprintf(ranks, sizeof ranks, "%d-%d", rows[i].rmin, rows[i].rmax);
        fprintf(f, "%s %s %s %llu %s\n", gas_coll_name(rows[i].coll), ranks,
                rows[i].multi ? "multi" : "*", (unsigned long long)rows[i].from, rows[i].alg);
    }
    fclose(f);
}

static void check_team(gas_team_t team, int n, gas_coll_t c)
{
    uint64_t sizes[400];
    int k = 0;
    for (int i = 0; i < nrows; i++) {
        if (rows[i].coll != c)
            continue;
        uint64_t f = rows[i].from;
        if (f > 0)
            sizes[k++] = f - 1;
        sizes[k++] = f;
        sizes[k++] = f + 1;
    }
    for (uint64_t b = 0; b < (64u << 20) && k < 400; b = b ? b * 3 : 1)
        sizes[k++] = b;
    for (int i = 0; i < k; i++) {
        const char *got = NULL, *want = reference(c, n, sizes[i]);
        if (CHECK_OK(gas_coll_choice(team, c, (size_t)sizes[i], &got)))
            CHECK(got && strcmp(got, want) == 0, "%s on a team of %d, %llu B: chose %s, want %s",
                  gas_coll_name(c), n, (unsigned long long)sizes[i], got ? got : "(null)", want);
    }
}

int main(void)
{
    const int ANY = 1 << 30;
    add(GAS_COLL_ALLREDUCE, 1, ANY, 0, 0, "ring");
    add(GAS_COLL_ALLREDUCE, 2, 2, 0, 100, "recursive_doubling");
    add(GAS_COLL_ALLREDUCE, 3, ANY, 0, 1024, "rabenseifner");
    add(GAS_COLL_ALLREDUCE, 1, ANY, 1, 0, "hierarchical");
    add(GAS_COLL_ALLREDUCE, 1, 2, 0, 50000, "ring");
    add(GAS_COLL_ALLREDUCE, 1, ANY, 0, 2 << 20, "recursive_doubling");
    add(GAS_COLL_ALLREDUCE, 3, 3, 0, 500, "ring");            /* out of from order */
    add(GAS_COLL_ALLREDUCE, 4, 8, 0, 0, "rabenseifner");      /* no team here matches */
    for (int i = 0; i < 20; i++)                             /* more steps than cached */
        add(GAS_COLL_GATHER, i % 2 ? 2 : 1, ANY, 0, (uint64_t)(i * 977 + 13) % 40000,
            i % 3 ? "linear" : "binomial");
    add(GAS_COLL_BROADCAST, 2, 3, 0, 4096, "scatter_allgather");

    char path[128];
    snprintf(path, sizeof path, "/tmp/gas-coll-table-%d.conf", (int)getpid());
    write_table(path);
    setenv("GAS_COLL_TUNING", path, 1);
    test_begin("coll_table");
    unlink(path);

    gas_team_t split = GAS_TEAM_NULL;
    MUST(gas_team_split_color(GAS_TEAM_WORLD, t_rank < 2 ? 0 : 1, 0, &split));
    int split_n = t_rank < 2 ? (t_nranks < 2 ? t_nranks : 2) : t_nranks - 2;
    gas_coll_t colls[] = {GAS_COLL_ALLREDUCE, GAS_COLL_GATHER, GAS_COLL_BROADCAST, GAS_COLL_SCATTER};
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        /* twice: the first call builds the remembered choice, the second reads it */
        for (int rep = 0; rep < 2; rep++) {
            check_team(GAS_TEAM_WORLD, t_nranks, colls[i]);
            check_team(split, split_n, colls[i]);
        }
    }
    MUST(gas_team_destroy(split));
    return test_end();
}
