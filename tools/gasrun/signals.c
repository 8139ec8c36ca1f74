/*
 * signals.c - every signal gasrun acts on arrives through a signalfd in the
 * event loop; no work is done in a handler.
 *
 *   SIGCHLD                          reap
 *   SIGINT, SIGTERM, SIGHUP, SIGQUIT forward to every rank's group, then tear
 *                                    the job down; exit 128+signal
 *   SIGUSR1, SIGUSR2                 forward only
 *
 * A forwarded signal that gasrun inherited as ignored (nohup, a background
 * job of a shell) stays ignored.  Ranks get back the signal mask and the
 * dispositions gasrun started with.
 */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const int terminating[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int passed_on[] = { SIGUSR1, SIGUSR2 };

static sigset_t orig_mask;
static struct sigaction orig_pipe, orig_chld, orig_ttin;
static struct gr_watch sig_watch;
static struct gr_job *sig_job;

static bool is_ignored(int sig)
{
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

static bool in_list(int sig, const int *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == sig)
            return true;
    return false;
}

static void on_signal(struct gr_watch *w, uint32_t events)
{
    struct signalfd_siginfo si;
    for (;;) {
        ssize_t n = read(w->fd, &si, sizeof si);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof si)
            return;
        int sig = (int)si.ssi_signo;
        char name[16];
        if (sig == SIGCHLD) {
            gr_reap(sig_job);
        } else if (in_list(sig, terminating, sizeof terminating / sizeof terminating[0])) {
            gr_job_interrupt(sig_job, sig);
        } else {
            gr_info("forwarding %s to the ranks", gr_signame(sig, name));
            gr_job_signal(sig_job, sig, true);
        }
    }
}

int gr_signals_init(struct gr_job *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (size_t i = 0; i < sizeof terminating / sizeof terminating[0]; i++)
        if (!is_ignored(terminating[i]))
            sigaddset(&set, terminating[i]);
    for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++)
        if (!is_ignored(passed_on[i]))
            sigaddset(&set, passed_on[i]);

    /* An ignored SIGCHLD would make the kernel reap the ranks for us. */
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigemptyset(&dfl.sa_mask);
    sigemptyset(&ign.sa_mask);
    sigaction(SIGCHLD, &dfl, &orig_chld);
    /* A closed stdout must not kill gasrun (its ranks would be orphaned). */
    sigaction(SIGPIPE, &ign, &orig_pipe);
    /* Reading the terminal from the background (stdio.c's relay) must fail
     * with EIO, not stop gasrun, which does not read it there anyway. */
    sigaction(SIGTTIN, &ign, &orig_ttin);

    if (sigprocmask(SIG_BLOCK, &set, &orig_mask) < 0) {
        gr_msg("sigprocmask: %s", strerror(errno));
        return -errno;
    }
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) {
        gr_msg("signalfd: %s", strerror(errno));
        return -errno;
    }
    sig_job = job;
    return gr_loop_add(&sig_watch, fd, EPOLLIN, on_signal);
}

void gr_signals_child_reset(void)
{
    sigaction(SIGPIPE, &orig_pipe, NULL);
    sigaction(SIGCHLD, &orig_chld, NULL);
    sigaction(SIGTTIN, &orig_ttin, NULL);
    sigprocmask(SIG_SETMASK, &orig_mask, NULL);
}

bool gr_signals_terminating_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) < 0)
        return false;
    for (size_t i = 0; i < sizeof terminating / sizeof terminating[0]; i++)
        if (sigismember(&pending, terminating[i]) == 1)
            return true;
    return false;
}
