/*
 * main.c - gasrun: start the ranks of a job on this host or on several, serve
 * their rendezvous, forward their stdio and signals, and end the job cleanly.
 * See docs/gasrun.md and gasrun.h for the parts.
 */
#include "gasrun.h"
#include "log.h"
#include "rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

/* Closed 0/1/2 would be reused by our pipes and then clobbered in the child. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

static int random_bytes(void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            gr_msg("getrandom: %s", strerror(errno));
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Each rank costs gasrun 3 fds; raise the soft limit if that is needed. */
static int raise_nofile(struct gr_job *job)
{
    if (getrlimit(RLIMIT_NOFILE, &job->nofile) < 0)
        return 0;
    rlim_t need = (rlim_t)job->nranks * 3 + 64;
    if (job->nofile.rlim_cur == RLIM_INFINITY || job->nofile.rlim_cur >= need)
        return 0;
    if (job->nofile.rlim_max != RLIM_INFINITY && job->nofile.rlim_max < need) {
        gr_msg("%d ranks need %llu open files, the limit is %llu: raise it (ulimit -n)",
               job->nranks, (unsigned long long)need,
               (unsigned long long)job->nofile.rlim_max);
        return -EMFILE;
    }
    struct rlimit rl = { .rlim_cur = need, .rlim_max = job->nofile.rlim_max };
    setrlimit(RLIMIT_NOFILE, &rl);
    return 0;
}

/* ---- rendezvous events --------------------------------------------------- */

static void rdv_fail(void *ctx, const char *msg)
{
    gr_job_fail(ctx, 1, "%s; ending the job", msg);
}

static void rdv_abort(void *ctx, uint32_t rank, int32_t code, const char *msg)
{
    char name[128];
    int status = code & 0xff ? code & 0xff : 1;   /* (what an exit status holds: gas_abort) */
    char shown[48] = "";
    if (status != code)
        snprintf(shown, sizeof shown, ", exit status %d", status);
    gr_job_fail(ctx, status, "%s aborted (code %d%s): %s", gr_rank_name(ctx, (int)rank, name),
                (int)code, shown, msg);
}

static void rdv_hello(void *ctx, uint32_t rank, uint32_t pid)
{
    struct gr_job *job = ctx;
    gr_info("rank %u: HELLO (pid %u)", rank, pid);
    if (gr_verbose && job->join_report_at == 0)
        job->join_report_at = gr_now() + GR_JOIN_REPORT_S;
    gr_job_check_unjoined(job);
}

static void rdv_fini(void *ctx, uint32_t rank)
{
    gr_info("rank %u: FINI", rank);
}

static void rdv_closed(void *ctx, uint32_t rank)
{
    struct gr_job *job = ctx;
    job->ranks[rank].boot_closed = true;
    gr_rank_gone_check(job, (int)rank);
}

static void rdv_resumed(void *ctx, uint32_t rank)
{
    struct gr_job *job = ctx;
    job->ranks[rank].boot_closed = false;   /* (listen.c says it connected again) */
}

static void rdv_barrier(void *ctx)
{
    gr_job_check_stuck(ctx);
}

/* ---- main ---------------------------------------------------------------- */

/* Hosts and placement (2 on error), the program and the launcher (127 when
 * one cannot be run); -1 to go on. */
static int job_prepare(struct gr_job *job)
{
    job->self = getpid();
    job->nranks = job->opts.nranks;
    job->tag = job->opts.tag >= 0 ? job->opts.tag : job->nranks > 1;
    job->stderr_tty = isatty(STDERR_FILENO);
    job->exit_code = -1;
    job->devnull = -1;
    job->ranks = calloc((size_t)job->nranks, sizeof *job->ranks);
    job->gone = calloc((size_t)job->nranks, sizeof *job->gone);
    if (job->ranks == NULL || job->gone == NULL) {
        gr_msg("out of memory");
        return 1;
    }
    for (int r = 0; r < job->nranks; r++)
        job->ranks[r].out.fd = job->ranks[r].err.fd = -1;
    int rc = gr_hosts_setup(job);
    if (rc >= 0)
        return rc;
    /* The program must be here only when a rank runs here. */
    if (job->nremote < job->nranks && gr_resolve_program(job->opts.argv[0], &job->prog_path) < 0)
        return 127;
    if (gr_remote_setup(job) < 0)
        return job->launcher_path == NULL && job->launcher != NULL ? 127 : 1;
    return -1;
}

static int job_setup(struct gr_job *job)
{
    if (random_bytes(&job->key, sizeof job->key) < 0 ||
        random_bytes(&job->id, sizeof job->id) < 0)
        return -1;
    if (raise_nofile(job) < 0 || gr_bind_plan(job) < 0)
        return -1;
    job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->devnull < 0) {
        gr_msg("/dev/null: %s", strerror(errno));
        return -1;
    }
    /* Descendants that a rank leaves behind become our children, so the
     * final sweep finds them even when they left the rank's group. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        gr_info("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
    if (gr_loop_init() < 0 || gr_signals_init(job) < 0 || gr_stdin_setup(job) < 0)
        return -1;
    gr_streams_start(job);
    struct gr_rdv_ops ops = {
        .ctx = job,
        .fail = rdv_fail,
        .abort = rdv_abort,
        .hello = rdv_hello,
        .fini = rdv_fini,
        .closed = rdv_closed,
        .resumed = rdv_resumed,
        .barrier = rdv_barrier,
    };
    job->rdv = gr_rdv_create((uint32_t)job->nranks, job->key, &ops);
    if (job->rdv == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    return gr_net_setup(job);
}

static void job_free(struct gr_job *job)
{
    for (int i = 0; i < job->nhosts; i++) {
        free(job->hosts[i].name);
        free(job->hosts[i].iface);
        free(job->hosts[i].addr);
    }
    free(job->hosts);
    gr_remote_free(job);
    free(job->ranks);
    free(job->gone);
    free(job->prog_path);
    free(job->cpusets);
}

int main(int argc, char **argv)
{
    struct gr_job job = { .exit_code = -1 };
    int rc = gr_options_parse(argc, argv, &job.opts);
    if (rc >= 0)
        return rc;
    ensure_std_fds();
    rc = job_prepare(&job);
    if (rc < 0 && job_setup(&job) < 0)
        rc = 1;
    if (rc >= 0) {
        gr_net_fini(&job);
        job_free(&job);
        return rc;
    }

    gr_info("job %08x: %d rank%s of %s", job.id, job.nranks, job.nranks == 1 ? "" : "s",
            job.prog_path ? job.prog_path : job.opts.argv[0]);
    job.start = gr_now();
    if (job.opts.timeout > 0)
        job.timeout_at = job.start + job.opts.timeout;
    gr_launch(&job);

    while (job.live > 0 || (job.unstarted > 0 && !job.tearing && job.exit_code < 0)) {
        gr_loop_wait(gr_job_wait_ms(&job));
        gr_job_tick(&job);
    }

    gr_stdin_close();
    gr_job_sweep(&job);
    gr_streams_drain(&job, job.interrupts > 0 || job.timed_out);
    gr_net_fini(&job);
    /* Closing the TCP boot connections also ends remote ranks that outlived
     * their launcher (runtime/boot_watch.c). */
    gr_rdv_destroy(job.rdv);
    gr_shm_sweep(job.id);
    gr_loop_fini();
    close(job.devnull);
    job_free(&job);
    int code = job.exit_code < 0 ? 0 : job.exit_code;
    gr_info("job %08x done in %.2f s: exit status %d", job.id, gr_now() - job.start, code);
    return code;
}
