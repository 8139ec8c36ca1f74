/*
 * teardown.c - ending a job, and leaving nothing behind.
 *
 * The first failure (a rank's non-zero exit or death by a signal, an ABORT, a
 * protocol error, the timeout, a barrier that can never complete) decides the
 * exit status and starts the teardown: SIGTERM to every rank's process group,
 * SIGKILL to all of them GR_GRACE_S later.  A terminating signal to gasrun
 * does the same with the signal itself instead of SIGTERM; a second one kills
 * at once.  When every rank is reaped, the final sweep kills what is left of
 * each group and every other descendant (gasrun is their subreaper), and
 * removes /dev/shm/gas-<jobid>-* files and directories.
 */
#include "gasrun.h"
#include "log.h"
#include "rendezvous.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void gr_job_signal(struct gr_job *job, int sig, bool running_only)
{
    for (int r = 0; r < job->nranks; r++) {
        const struct gr_rank *rk = &job->ranks[r];
        if (rk->pid <= 0 || (running_only && !rk->running))
            continue;
        /* The whole group: a rank's own children go with it. */
        kill(-rk->pid, sig);
    }
}

static int live_count(const struct gr_job *job)
{
    return job->live;
}

static void start_teardown(struct gr_job *job, int sig)
{
    if (!job->tearing) {
        job->tearing = true;
        job->grace_at = gr_now() + GR_GRACE_S;
    }
    /* Also the groups of ranks that already exited: their children. */
    gr_job_signal(job, sig, false);
}

void gr_job_fail(struct gr_job *job, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (job->exit_code >= 0) {
        gr_info("(while ending the job) %s", msg);
        return;
    }
    gr_msg("%s", msg);
    job->exit_code = code & 0xff ? code & 0xff : 1;
    start_teardown(job, SIGTERM);
}

void gr_job_interrupt(struct gr_job *job, int sig)
{
    char name[16];
    job->interrupts++;
    if (job->exit_code < 0)
        job->exit_code = 128 + sig;
    if (job->tearing) {
        gr_info("%s during teardown: killing the ranks now", gr_signame(sig, name));
        gr_job_signal(job, SIGKILL, false);
        job->killed = true;
        return;
    }
    gr_info("%s: forwarding it to %d ranks", gr_signame(sig, name), live_count(job));
    start_teardown(job, sig);
}

/*
 * A barrier waits for all ranks.  If some rank can never arrive (it exited 0
 * and its boot connection is closed) while others wait, the job would hang:
 * fail it instead.
 */
void gr_job_check_stuck(struct gr_job *job)
{
    if (job->exit_code >= 0 || job->ngone == 0 || job->rdv == NULL)
        return;
    uint32_t waiting = gr_rdv_barrier_arrived(job->rdv);
    if (waiting == 0)
        return;
    for (int i = 0; i < job->ngone; i++) {
        int r = job->gone[i];
        if (gr_rdv_in_barrier(job->rdv, (uint32_t)r))
            continue;
        char name[128];
        gr_job_fail(job, 1, "%s exited with status 0%s while %u rank%s wait%s in a "
                    "barrier that it can no longer join",
                    gr_rank_name(job, r, name), gr_rdv_sent_fini(job->rdv, (uint32_t)r) ? " after FINI" : "",
                    waiting, waiting == 1 ? "" : "s", waiting == 1 ? "s" : "");
        return;
    }
}

int gr_job_wait_ms(const struct gr_job *job)
{
    double next = gr_net_deadline(job);
    if (job->timeout_at > 0 && !job->tearing && (next < 0 || job->timeout_at < next))
        next = job->timeout_at;
    if (job->tearing && !job->killed && (next < 0 || job->grace_at < next))
        next = job->grace_at;
    if (job->join_report_at > 0 && !job->tearing && (next < 0 || job->join_report_at < next))
        next = job->join_report_at;
    if (job->unstarted > 0 && !job->tearing) {
        double poll = gr_now() + GR_LAUNCH_POLL_S;
        if (next < 0 || poll < next)
            next = poll;
    }
    int in_ms = gr_stdin_wait_ms();
    if (next < 0)
        return in_ms;
    double ms = (next - gr_now()) * 1000.0;
    int wait = ms <= 0 ? 0 : (int)ms + 1;
    return in_ms >= 0 && in_ms < wait ? in_ms : wait;
}

void gr_job_tick(struct gr_job *job)
{
    double now = gr_now();
    gr_net_tick(job, now);
    gr_stdin_tick();
    gr_launch_more(job);
    gr_job_report_unjoined(job, now);
    if (!job->tearing && job->timeout_at > 0 && now >= job->timeout_at) {
        gr_msg("job timed out after %s; killing %d ranks", job->opts.timeout_shown,
               live_count(job));
        job->exit_code = 124;
        job->timed_out = true;
        start_teardown(job, SIGTERM);
    }
    if (job->tearing && !job->killed && now >= job->grace_at) {
        if (job->live > 0)
            gr_info("%d ranks still running after %.0f s: SIGKILL", job->live, GR_GRACE_S);
        gr_job_signal(job, SIGKILL, false);
        job->killed = true;
    }
}

/* SIGKILL every child gasrun has (ranks' leftovers reparented to it). */
static int kill_children(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1) {
        kill(pid, SIGKILL);
        n++;
    }
    fclose(f);
    return n;
}

void gr_job_sweep(struct gr_job *job)
{
    /* What is left of each rank's group (the ranks themselves are reaped). */
    gr_job_signal(job, SIGKILL, false);
    /* Descendants that left their group were reparented to gasrun (the
     * subreaper): kill and reap until no child is left.  Each round reaps at
     * least one; killing a child may hand us its children. */
    for (;;) {
        int st;
        if (kill_children() < 0) {
            /* No /proc: all we can do is wait for the group kill above. */
        }
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;  /* ECHILD: nothing left */
        gr_info("swept pid %d", (int)pid);
    }
}

/* How deep remove_tree goes into a directory of the job (each level holds a descriptor). */
#define GR_SHM_SWEEP_DEPTH 32

/*
 * Removes `name` in the directory open at dfd; a directory with everything in
 * it, depth first.  It never follows a symbolic link (the link goes, not what
 * it names: O_NOFOLLOW also holds if a directory is swapped for a link
 * meanwhile) and never enters another file system than `dev` (a mount inside
 * is left, and so is the directory holding it).  0, or -1 with errno of the
 * first failure; what could be removed is removed either way.
 */
static int remove_tree(int dfd, const char *name, dev_t dev, int depth)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dfd, name, 0);
    if (st.st_dev != dev) {
        errno = EXDEV;
        return -1;
    }
    if (depth >= GR_SHM_SWEEP_DEPTH) {
        errno = ELOOP;
        return -1;
    }
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -1;
    DIR *d = fdopendir(sub);
    if (d == NULL) {
        int e = errno;
        close(sub);
        errno = e;
        return -1;
    }
    int first_err = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (remove_tree(sub, de->d_name, dev, depth + 1) < 0 && first_err == 0)
            first_err = errno;
    }
    closedir(d);
    if (first_err != 0) {
        errno = first_err;
        return -1;
    }
    return unlinkat(dfd, name, AT_REMOVEDIR);
}

/*
 * Removes every /dev/shm entry named gas-<jobid>-* (this job's id, all eight
 * digits and the dash, so no other job's name matches): files, and
 * directories with what they hold (remove_tree).
 */
void gr_shm_sweep(uint32_t job_id)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof prefix, "gas-%08x-", job_id);
    int dfd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    struct stat st;
    if (fstat(dfd, &st) < 0) {
        close(dfd);
        return;
    }
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, prefix, (size_t)plen) != 0)
            continue;
        if (remove_tree(dfd, de->d_name, st.st_dev, 0) == 0)
            gr_info("removed /dev/shm/%s left by the job", de->d_name);
        else
            gr_msg("cannot remove /dev/shm/%s: %s", de->d_name, strerror(errno));
    }
    closedir(d);
}
