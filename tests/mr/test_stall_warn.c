/*
 * GAS_STALL_WARN names whom a wait waits for.  The last rank sleeps 1.5 s
 * before a world barrier and before an allreduce; with GAS_STALL_WARN=500ms
 * (set here before gas_init) every other rank logs one warning in each, and
 * that warning must name the late rank: "rank L has not entered world
 * barrier" (the barrier's explainer; with udp's GAS_PROGRESS=poll the late
 * rank, asleep outside libgas, "did not answer", or the barrier's quiet
 * waits and names it as owing acknowledgements) and, for a collective, the
 * member its current round waits for ("the part of rank P"; P = L with 2
 * ranks).  Before, the warning said only what the call waited for ("the
 * other members", "a signal from rank P", P its round's partner). Each rank
 * catches its own stderr in a file around the two calls.  The allreduce's
 * result is checked too.
 */
#include <fcntl.h>
#include <unistd.h>

#include "check.h"

/* Run fn with fd 2 going to a fresh file; the file's text into out[cap]. */
static void caught(void (*fn)(void), char *out, size_t cap)
{
    char path[] = "/tmp/gas-test-stall-warn-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        test_die("mkstemp: cannot make a file for stderr");
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, out, cap - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
}

static void late_if_last(void)
{
    if (t_rank == t_nranks - 1)
        usleep(1500 * 1000);
}

static void barrier(void)
{
    late_if_last();
    CHECK_OK(gas_barrier());
}

static void allreduce(void)
{
    uint64_t mine = (uint64_t)t_rank + 1, sum = 0;
    late_if_last();
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &sum, &mine, 1, GAS_UINT64, GAS_OP_SUM));
    CHECK(sum == (uint64_t)t_nranks * (uint64_t)(t_nranks + 1) / 2, "allreduce sum %" PRIu64, sum);
}

/* The warning in text must say one of the n phrases of says[]. */
static void expect(const char *what, const char *text, const char *const *says, int n)
{
    if (t_rank == t_nranks - 1)
        return;   /* the late rank itself waits for nobody */
    const char *w = strstr(text, "has waited");
    CHECK(w != NULL, "%s: no GAS_STALL_WARN warning in stderr: \"%s\"", what, text);
    int found = 0;
    for (int i = 0; w != NULL && i < n; i++)
        found |= strstr(w, says[i]) != NULL;
    CHECK(w == NULL || found, "%s: the warning does not say \"%s\" (or %d other phrases): \"%s\"",
          what, says[0], n - 1, text);
    if (t_rank == 0 && w != NULL)
        test_note("%s warned: %.300s", what, text);
}

int main(void)
{
    setenv("GAS_STALL_WARN", "500ms", 1);
    setenv("GAS_TIMEOUT", "20s", 1);
    test_begin("stall_warn");
    if (t_nranks < 2) {
        test_note("needs 2 ranks or more");
        return test_end();
    }
    static char text[8192];
    int L = t_nranks - 1;
    char says[5][96];
    snprintf(says[0], sizeof says[0], "rank %d has not entered world barrier", L);
    /* udp, GAS_PROGRESS=poll: the late rank, asleep outside libgas, answers nobody, and
     * the barrier's quiet may be what waits (explained by the ranks owing acknowledgements) */
    snprintf(says[1], sizeof says[1], "rank %d did not answer when asked", L);
    snprintf(says[2], sizeof says[2], ": rank %d has not acknowledged this rank's datagrams", L);
    snprintf(says[3], sizeof says[3], ": ranks %d, ", L);
    snprintf(says[4], sizeof says[4], ", %d have not acknowledged this rank's datagrams", L);
    caught(barrier, text, sizeof text);
    const char *const b_says[] = {says[0], says[1], says[2], says[3], says[4]};
    expect("gas_barrier", text, b_says, 5);
    caught(allreduce, text, sizeof text);
    /* the member its round waits for, which may itself wait for the late one */
    snprintf(says[0], sizeof says[0], t_nranks == 2 ? "the part of rank 1" :
             "this rank waits for the part of rank");
    const char *const a_says[] = {says[0]};
    expect("gas_allreduce", text, a_says, 1);
    CHECK_OK(gas_barrier());
    return test_end();
}
