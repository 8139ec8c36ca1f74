/* reap.c - collect exited children; the first failing rank fails the job. */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <signal.h>
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
    gr_job_check_stuck(job);
}

static void rank_exited(struct gr_job *job, int r, int st)
{
    struct gr_rank *rk = &job->ranks[r];
    char sig[16];
    rk->running = false;
    rk->wstatus = st;
    job->live--;

    if (WIFEXITED(st)) {
        gr_info("rank %d (pid %d) exited with status %d", r, (int)rk->pid, WEXITSTATUS(st));
        if (WEXITSTATUS(st) == 0) {
            gr_rank_gone_check(job, r);
            return;
        }
        gr_job_fail(job, WEXITSTATUS(st), "rank %d exited with status %d", r, WEXITSTATUS(st));
    } else if (WIFSIGNALED(st)) {
        gr_info("rank %d (pid %d) killed by signal %s", r, (int)rk->pid,
                gr_signame(WTERMSIG(st), sig));
        gr_job_fail(job, 128 + WTERMSIG(st), "rank %d killed by signal %s%s", r,
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
        if (r >= 0)
            rank_exited(job, r, st);
        else
            gr_info("reaped pid %d, a descendant left behind by a rank", (int)pid);
    }
}
