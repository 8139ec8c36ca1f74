/*
 * boot_watch.c - a rank on another host than gasrun ends when its boot
 * connection does.
 *
 * A rank that gasrun forked dies with it (PR_SET_PDEATHSIG).  A rank started
 * through ssh is no child of gasrun, and ssh without a terminal passes no
 * signal on: when gasrun (or the ssh in between) dies, nothing tells the rank.
 * But gasrun holds the rank's TCP boot connection until the rank is gone, and
 * the kernel closes it when gasrun dies in any way; a host that vanishes is
 * noticed by keepalive (boot_tcp.c).  So a thread waits for that connection to
 * close (POLLRDHUP: gasrun never half-closes) and then kills the rank: its
 * process group when it leads one (its children too), else itself.  It only
 * polls, so replies the rank reads are never taken from it.  A connection
 * that the kernel gave up on (timed out or reset: a network outage, which
 * gasrun may well have lived through) is no sign of gasrun's end: the
 * bootstrap's resume callback connects again (boot_gasrun.c), and only when
 * that fails does the rank end.
 */
#include "boot.h"
#include "boot_tcp.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    bool running;
    pthread_t thread;
    int fd;
    int (*resume)(void);
    int stop[2];                /* written by stop(): the thread returns */
    char what[128];
} watch = { .stop = { -1, -1 } };

static void *watch_main(void *arg)
{
    struct pollfd pfd[2] = {
        { .fd = watch.fd, .events = POLLRDHUP },
        { .fd = watch.stop[0], .events = POLLIN },
    };
    bool broken = false;
    for (;;) {
        int n = poll(pfd, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (pfd[1].revents & (POLLIN | POLLHUP)))
            return NULL;
        if (!(pfd[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            continue;
        enum gas_boot_tcp_fate fate = gas_boot_tcp_fate(watch.fd);
        if (fate == GAS_BOOT_TCP_CLOSED)
            break;
        if (fate == GAS_BOOT_TCP_BROKEN && watch.resume() != 0) {
            broken = true;
            break;
        }
        /* Resumed (by us or by a request): watch the new connection. */
        struct timespec ts = {.tv_nsec = 10000000};
        nanosleep(&ts, NULL);
    }
    char msg[256];
    int len = snprintf(msg, sizeof msg,
                       broken ? "[gas r%d] boot: the connection to gasrun (%s) broke and could "
                                "not be made again (see above); ending this rank\n"
                              : "[gas r%d] boot: the connection to gasrun (%s) closed: gasrun "
                                "is gone; ending this rank\n",
                       gas_rt_log_rank_, watch.what);
    if (write(STDERR_FILENO, msg, (size_t)len) < 0) {
        /* nobody may be listening any more */
    }
    if (getpgrp() == getpid())
        kill(0, SIGKILL);
    kill(getpid(), SIGKILL);
    return NULL;
}

void gas_rt_boot_watch_start(int fd, const char *what, int (*resume)(void))
{
    if (watch.running)
        return;
    if (pipe2(watch.stop, O_CLOEXEC) < 0) {
        gas_log_warn("boot", "no watchdog on the gasrun connection: pipe: %s", strerror(errno));
        return;
    }
    watch.fd = fd;
    watch.resume = resume;
    snprintf(watch.what, sizeof watch.what, "%s", what);
    /* The thread takes no signal meant for the program. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&watch.thread, NULL, watch_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        gas_log_warn("boot", "no watchdog on the gasrun connection: pthread_create: %s",
                     strerror(rc));
        close(watch.stop[0]);
        close(watch.stop[1]);
        watch.stop[0] = watch.stop[1] = -1;
        return;
    }
    watch.running = true;
}

void gas_rt_boot_watch_stop(void)
{
    if (!watch.running)
        return;
    char c = 0;
    while (write(watch.stop[1], &c, 1) < 0 && errno == EINTR) {
    }
    pthread_join(watch.thread, NULL);
    close(watch.stop[0]);
    close(watch.stop[1]);
    watch.stop[0] = watch.stop[1] = -1;
    watch.running = false;
}
