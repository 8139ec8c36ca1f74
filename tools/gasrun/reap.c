/* reap.c - collect exited children; the first failing rank fails the job. */
#include "gasrun.h"
#include "log.h"
#include "rendezvous.h"
#include "runtime/boot_wire.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

static int rank_of_pid(const struct gr_job *job, pid_t pid)
{
    for (int r = 0; r < job->nranks; r++)
        if (job->ranks[r].pid == pid && job->ranks[r].running)
            return r;
    return -1;
}

/* A rank that exited 0 and whose boot connection is closed can never again
 * enter a barrier; remember it so that a barrier waiting for it is reported. */
void gr_rank_gone_check(struct gr_job *job, int r)
{
    struct gr_rank *rk = &job->ranks[r];
    if (rk->gone || rk->running || rk->pid == 0 || !rk->boot_closed)
        return;
    if (!WIFEXITED(rk->wstatus) || WEXITSTATUS(rk->wstatus) != 0)
        return;
    rk->gone = true;
    job->gone[job->ngone++] = r;
    /* Not a failure (the others may be leaving too), but the usual cause of
     * a barrier, collective or wait that then fails in the others (over shm
     * at once, the process being gone; over udp once its port refuses
     * datagrams, or after GAS_UDP_PEER_TIMEOUT),
     * which gasrun cannot see: say so once, while others still run (not once
     * the job is failing: gasrun ends it then, and the exit may be an
     * abort's). */
    if (job->live > 0 && job->exit_code < 0 && job->rdv &&
        gr_rdv_helloed(job->rdv, (uint32_t)r) && !gr_rdv_sent_fini(job->rdv, (uint32_t)r) &&
        !job->warned_nofini) {
        char name[128];
        job->warned_nofini = true;
        gr_msg("%s exited with status 0 %s while %d rank%s still run%s; a barrier, "
               "collective or gas_wait_until that needs it cannot complete: it fails with "
               "GAS_ERR_PEER, at once where shm reaches it, else once udp finds its port "
               "closed (or, where nothing answers, after GAS_UDP_PEER_TIMEOUT; a "
               "gas_wait_until on a rank that never talked to it: when another rank finds "
               "it, or at GAS_TIMEOUT)",
               gr_rank_name(job, r, name),
               gr_rdv_fini_failed(job->rdv, (uint32_t)r)
                   ? "after its gas_finalize failed (it was not finalized; its error says why)"
                   : "without calling gas_finalize",
               job->live, job->live == 1 ? "" : "s", job->live == 1 ? "s" : "");
    }
    gr_job_check_stuck(job);
}

/*
 * A rank that exited 0 without ever saying HELLO, in a job where another rank
 * did (so the program uses libgas), cannot have been part of the job: it never
 * called gas_init, or it lost GASRUN_BOOT_FD (GASRUN_BOOT_ADDR) and ran alone.  Fail the job
 * naming it; called when a rank exits and when a rank says HELLO.  A job in
 * which no rank says HELLO is not a libgas job (sh -c ..., hostname): left be.
 */
void gr_job_check_unjoined(struct gr_job *job)
{
    if (job->exit_code >= 0 || job->rdv == NULL)
        return;
    bool any_joined = false;
    for (int r = 0; r < job->nranks && !any_joined; r++)
        any_joined = gr_rdv_helloed(job->rdv, (uint32_t)r);
    if (!any_joined)
        return;
    for (int r = 0; r < job->nranks; r++) {
        const struct gr_rank *rk = &job->ranks[r];
        if (rk->running || rk->pid == 0 || gr_rdv_helloed(job->rdv, (uint32_t)r) ||
            !WIFEXITED(rk->wstatus) || WEXITSTATUS(rk->wstatus) != 0)
            continue;
        char name[128];
        gr_job_fail(job, 1, "%s exited without joining the job (it never called gas_init, "
                    "or lost %s)", gr_rank_name(job, r, name),
                    rk->remote ? "GASRUN_BOOT_ADDR" : "GASRUN_BOOT_FD");
        return;
    }
}

/*
 * --verbose, from GR_JOIN_REPORT_S after the first HELLO on: every
 * GR_JOIN_REPORT_S name the ranks that have not said HELLO yet, until all
 * have or the job ends (gas_init waits for them).
 */
void gr_job_report_unjoined(struct gr_job *job, double now)
{
    if (job->join_report_at <= 0 || now < job->join_report_at)
        return;
    size_t n = ((size_t)job->nranks + 7) / 8;
    unsigned char *bits = calloc(n, 1);
    if (bits == NULL || job->tearing) {
        free(bits);
        job->join_report_at = -1;
        return;
    }
    for (int r = 0; r < job->nranks; r++)
        if (gr_rdv_helloed(job->rdv, (uint32_t)r))
            bits[r / 8] |= (unsigned char)(1u << (r % 8));
    char missing[512];
    uint32_t left = gas_boot_format_ranks(bits, (uint32_t)job->nranks, 0, missing, sizeof missing);
    free(bits);
    if (left == 0) {
        job->join_report_at = -1;
        return;
    }
    gr_msg("%.0f s: %u of %d ranks not connected yet (gas_init not called): rank%s %s",
           now - job->start, left, job->nranks, left == 1 ? "" : "s", missing);
    job->join_report_at = now + GR_JOIN_REPORT_S;
}

static void rank_exited(struct gr_job *job, int r, int st)
{
    struct gr_rank *rk = &job->ranks[r];
    char sig[16], name[128];
    rk->running = false;
    rk->wstatus = st;
    job->live--;
    /* A launcher that is gone with its rank never connected: that rank can
     * send nothing any more (listen.c refuses it from now on). */
    if (rk->remote && !rk->tcp)
        rk->boot_closed = true;
    gr_rank_name(job, r, name);

    if (WIFEXITED(st)) {
        gr_info("%s (pid %d) exited with status %d", name, (int)rk->pid, WEXITSTATUS(st));
        if (WEXITSTATUS(st) == 0) {
            gr_job_check_unjoined(job);
            gr_rank_gone_check(job, r);
            return;
        }
        /* ssh says 255 for its own failures and for a remote rank killed by
         * a signal. */
        gr_job_fail(job, WEXITSTATUS(st), "%s exited with status %d%s", name, WEXITSTATUS(st),
                    rk->remote && job->launcher_shell && WEXITSTATUS(st) == 255
                        ? " (from ssh: it could not reach the host, or the rank died of a signal)"
                        : "");
    } else if (WIFSIGNALED(st)) {
        gr_info("%s (pid %d) killed by signal %s", name, (int)rk->pid,
                gr_signame(WTERMSIG(st), sig));
        gr_job_fail(job, 128 + WTERMSIG(st), "%s killed by signal %s%s", name,
                    gr_signame(WTERMSIG(st), sig), WCOREDUMP(st) ? " (core dumped)" : "");
    }
}

void gr_reap(struct gr_job *job)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        int r = rank_of_pid(job, pid);
        if (r >= 0) {
            rank_exited(job, r, st);
            gr_launch_more(job);
        }
        else
            gr_info("reaped pid %d, a descendant left behind by a rank", (int)pid);
    }
}
