/* launch.c - find the program, fork and exec the ranks (or their launchers). */
#include "gasrun.h"
#include "log.h"
#include "rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 if path is an executable regular file, else an errno for the message. */
static int check_executable(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
        return EACCES;
    return 0;
}

int gr_resolve_program(const char *name, char **path_p)
{
    if (*name == '\0') {
        gr_msg("empty program name");
        return -ENOENT;
    }
    if (strchr(name, '/') != NULL) {
        int err = check_executable(name);
        if (err != 0) {
            gr_msg("cannot run %s: %s", name, strerror(err));
            return -err;
        }
        *path_p = strdup(name);
        return *path_p != NULL ? 0 : -ENOMEM;
    }
    /* Search PATH like execvp (an empty entry is the current directory). */
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    int first_err = ENOENT;
    for (const char *p = path;; ) {
        const char *colon = strchrnul(p, ':');
        size_t dlen = (size_t)(colon - p);
        char *cand;
        if (asprintf(&cand, "%.*s%s%s", (int)dlen, p, dlen ? "/" : "", name) < 0)
            return -ENOMEM;
        int err = check_executable(cand);
        if (err == 0) {
            *path_p = cand;
            return 0;
        }
        if (err == EACCES && first_err == ENOENT)
            first_err = EACCES;
        free(cand);
        if (*colon == '\0')
            break;
        p = colon + 1;
    }
    if (first_err == ENOENT)
        gr_msg("cannot run %s: command not found in PATH", name);
    else
        gr_msg("cannot run %s: found in PATH but not executable", name);
    return -first_err;
}

static void set_env_u(const char *name, const char *fmt, unsigned long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, fmt, v);
    setenv(name, buf, 1);
}

/* In the child: the part common to local ranks and launchers. */
static void child_setup(struct gr_job *job, int r, int out_w, int err_w)
{
    setpgid(0, 0);
    /* Die with gasrun; if it is already gone, do not run at all. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != job->self)
        _exit(127);
    gr_signals_child_reset();

    int in = r == 0 ? job->rank0_stdin : job->devnull;
    if ((in != STDIN_FILENO && dup2(in, STDIN_FILENO) < 0) ||
        dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0)
        _exit(127);
    setrlimit(RLIMIT_NOFILE, &job->nofile);
}

/* In the child: become rank `r` on this host and exec.  Never returns. */
static void __attribute__((noreturn))
child_exec(struct gr_job *job, int r, int out_w, int err_w, int boot)
{
    const struct gr_rank *rk = &job->ranks[r];
    const struct gr_host *h = &job->hosts[rk->host];
    child_setup(job, r, out_w, err_w);
    /* Only 0, 1, 2 and the boot socket cross exec; gasrun's own fds are
     * CLOEXEC already, this also covers any it inherited. */
    int flags = fcntl(boot, F_GETFD);
    if (flags < 0 || fcntl(boot, F_SETFD, flags & ~FD_CLOEXEC) < 0)
        _exit(127);
    if (boot > 3)
        close_range(3, (unsigned)boot - 1, CLOSE_RANGE_CLOEXEC);
    close_range((unsigned)boot + 1, ~0u, CLOSE_RANGE_CLOEXEC);

    set_env_u("GASRUN_RANK", "%llu", (unsigned long long)r);
    set_env_u("GASRUN_NRANKS", "%llu", (unsigned long long)job->nranks);
    set_env_u("GASRUN_LOCAL_RANK", "%llu", (unsigned long long)rk->local_rank);
    set_env_u("GASRUN_LOCAL_SIZE", "%llu", (unsigned long long)h->nranks);
    set_env_u("GASRUN_JOB_KEY", "%016llx", (unsigned long long)job->key);
    set_env_u("GASRUN_JOB_ID", "%08llx", (unsigned long long)job->id);
    set_env_u("GASRUN_BOOT_FD", "%llu", (unsigned long long)boot);
    set_env_u("GASRUN_TAG_OUTPUT", "%llu", (unsigned long long)job->tag);
    set_env_u("GASRUN_STDERR_TTY", "%llu", (unsigned long long)job->stderr_tty);
    unsetenv("GASRUN_BOOT_ADDR");
    if (h->iface != NULL || h->addr != NULL)
        setenv("GAS_UDP_IFACE", h->iface ? h->iface : h->addr, 1);
    gr_bind_child(job, r);

    execv(job->prog_path, job->opts.argv);
    int err = errno;
    dprintf(STDERR_FILENO, "gasrun: rank %d: cannot execute %s: %s\n", r, job->prog_path,
            strerror(err));
    _exit(127);
}

/* In the child: start rank `r` on its host through the launcher. */
static void __attribute__((noreturn)) child_launch(struct gr_job *job, int r, int out_w, int err_w)
{
    child_setup(job, r, out_w, err_w);
    close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
    gr_remote_exec(job, r);
}

static int pipe_for_output(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    /* Only gasrun's end is non-blocking; the rank writes as usual. */
    if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        return -err;
    }
    return 0;
}

static int launch_rank(struct gr_job *job, int r)
{
    struct gr_rank *rk = &job->ranks[r];
    int out[2], err[2], sv[2] = { -1, -1 };
    const char *what = "pipe";
    int e = -pipe_for_output(out);
    if (e != 0)
        goto err;
    e = -pipe_for_output(err);
    if (e != 0)
        goto err_close_out;
    what = "socketpair";
    if (!rk->remote && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        e = errno;
        goto err_close_err;
    }
    what = "fork";
    pid_t pid = fork();
    if (pid < 0) {
        e = errno;
        goto err_close_sv;
    }
    if (pid == 0 && rk->remote)
        child_launch(job, r, out[1], err[1]);
    if (pid == 0)
        child_exec(job, r, out[1], err[1], sv[1]);

    /* Also from here, so that a signal to the group cannot miss it. */
    setpgid(pid, pid);
    rk->pid = pid;
    rk->running = true;
    job->live++;
    close(out[1]);
    close(err[1]);
    char name[128];
    if (rk->remote) {
        gr_info("%s started: launcher pid %d", gr_rank_name(job, r, name), (int)pid);
    } else {
        close(sv[1]);
        gr_info("%s started: pid %d", gr_rank_name(job, r, name), (int)pid);
    }

    int rc = gr_stream_open(job, &rk->out, out[0], r, STDOUT_FILENO);
    int rc2 = gr_stream_open(job, &rk->err, err[0], r, STDERR_FILENO);
    int rc3 = rk->remote ? 0 : gr_rdv_add_conn(job->rdv, sv[0], r, NULL, 0);
    if (rc < 0 || rc2 < 0 || rc3 < 0) {
        gr_job_fail(job, 1, "cannot watch the pipes and socket of rank %d: %s", r,
                    strerror(-(rc < 0 ? rc : rc2 < 0 ? rc2 : rc3)));
        return -1;
    }
    return 0;

err_close_sv:
    if (sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
err_close_err:
    close(err[0]);
    close(err[1]);
err_close_out:
    close(out[0]);
    close(out[1]);
err:
    gr_job_fail(job, 1, "cannot start rank %d: %s: %s", r, what, strerror(e));
    return -1;
}

static int start_rank(struct gr_job *job, int r)
{
    int rc = launch_rank(job, r);
    if (r == 0)
        gr_stdin_started(job);
    return rc;
}

int gr_launch(struct gr_job *job)
{
    for (int i = 0; i < job->nhosts; i++) {
        struct gr_host *h = &job->hosts[i];
        h->next = h->first;
        if (h->local)
            for (; h->next < h->first + h->nranks; h->next++)
                if (start_rank(job, h->next) < 0)
                    return -1;
    }
    job->unstarted = job->nremote;
    gr_launch_more(job);
    return 0;
}

/*
 * Remote ranks start in a window per host: at most GR_LAUNCH_WINDOW of its
 * launchers may be "in flight" (running, their rank not yet connected, and
 * started less than GR_LAUNCH_SETTLE_S ago), because sshd drops connections
 * past its MaxStartups (10 unauthenticated ones by default).  Called again
 * when a rank connects or a launcher exits, and from the loop's tick.
 */
void gr_launch_more(struct gr_job *job)
{
    if (job->unstarted == 0 || job->tearing || job->exit_code >= 0)
        return;
    double now = gr_now();
    for (int i = 0; i < job->nhosts; i++) {
        struct gr_host *h = &job->hosts[i];
        int end = h->first + h->nranks, inflight = 0;
        if (h->local || h->next == end)
            continue;
        for (int r = h->first; r < h->next; r++) {
            const struct gr_rank *rk = &job->ranks[r];
            inflight += rk->running && !rk->tcp && now - rk->started_at < GR_LAUNCH_SETTLE_S;
        }
        for (; h->next < end && inflight < GR_LAUNCH_WINDOW; inflight++) {
            job->unstarted--;
            job->ranks[h->next].started_at = now;
            if (start_rank(job, h->next++) < 0)
                return;
        }
    }
}
