/*
 * loop.h - gasrun's single event loop (epoll) and monotonic clock.
 *
 * Every fd gasrun watches is a struct gr_watch embedded in the object that
 * owns the fd; the loop calls watch->fn with the epoll event bits.  A watch
 * removed with gr_loop_del() is never called again, even for an event already
 * fetched in the current round, so a handler may close any fd.  Memory that an
 * event of the current round may still point at is released with
 * gr_loop_defer_free() (freed when the round ends).
 */
#ifndef GR_LOOP_H
#define GR_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct gr_watch;
typedef void gr_watch_fn(struct gr_watch *w, uint32_t events);

struct gr_watch {
    gr_watch_fn *fn;
    int fd;             /* -1 when not registered */
    uint32_t events;    /* the interest set registered with epoll */
};

int gr_loop_init(void);
void gr_loop_fini(void);

/* Register fd with interest `events` (EPOLLIN/EPOLLOUT); 0 or -errno. */
int gr_loop_add(struct gr_watch *w, int fd, uint32_t events, gr_watch_fn *fn);
/* Change the interest set (no-op when unchanged). */
void gr_loop_mod(struct gr_watch *w, uint32_t events);
/* Unregister (does not close the fd). */
void gr_loop_del(struct gr_watch *w);

/* Wait up to timeout_ms (-1: forever) and dispatch one round of events. */
void gr_loop_wait(int timeout_ms);

void gr_loop_defer_free(void *p);

/* Seconds on CLOCK_MONOTONIC. */
double gr_now(void);

#endif
