/* loop.c - epoll event loop with safe removal during dispatch (see loop.h). */
#include "loop.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GR_LOOP_BATCH 256

static int epfd = -1;
static void **deferred;
static size_t ndeferred, deferred_cap;

int gr_loop_init(void)
{
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) {
        gr_msg("epoll_create1: %s", strerror(errno));
        return -errno;
    }
    return 0;
}

void gr_loop_fini(void)
{
    if (epfd >= 0)
        close(epfd);
    epfd = -1;
    for (size_t i = 0; i < ndeferred; i++)
        free(deferred[i]);
    free(deferred);
    deferred = NULL;
    ndeferred = deferred_cap = 0;
}

int gr_loop_add(struct gr_watch *w, int fd, uint32_t events, gr_watch_fn *fn)
{
    struct epoll_event ev = { .events = events, .data.ptr = w };
    w->fn = fn;
    w->fd = fd;
    w->events = events;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int err = errno;
        w->fd = -1;
        gr_msg("epoll_ctl(ADD, fd %d): %s", fd, strerror(err));
        return -err;
    }
    return 0;
}

void gr_loop_mod(struct gr_watch *w, uint32_t events)
{
    if (w->fd < 0 || w->events == events)
        return;
    struct epoll_event ev = { .events = events, .data.ptr = w };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev) == 0)
        w->events = events;
    else
        gr_msg("epoll_ctl(MOD, fd %d): %s", w->fd, strerror(errno));
}

void gr_loop_del(struct gr_watch *w)
{
    if (w->fd < 0)
        return;
    epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
}

void gr_loop_defer_free(void *p)
{
    if (ndeferred == deferred_cap) {
        size_t cap = deferred_cap ? 2 * deferred_cap : 16;
        void **n = realloc(deferred, cap * sizeof *n);
        if (n == NULL) {
            /* Leaking is safer than freeing memory an event may still name. */
            return;
        }
        deferred = n;
        deferred_cap = cap;
    }
    deferred[ndeferred++] = p;
}

void gr_loop_wait(int timeout_ms)
{
    struct epoll_event evs[GR_LOOP_BATCH];
    int n = epoll_wait(epfd, evs, GR_LOOP_BATCH, timeout_ms);
    if (n < 0 && errno != EINTR)
        gr_msg("epoll_wait: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        struct gr_watch *w = evs[i].data.ptr;
        if (w->fd >= 0)
            w->fn(w, evs[i].events);
    }
    for (size_t i = 0; i < ndeferred; i++)
        free(deferred[i]);
    ndeferred = 0;
}

double gr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
