/*
 * sink.c - gasrun's own stdout and stderr, written without blocking the loop.
 *
 * A reader that stops reading (a pager left on one page, a terminal paused
 * with Ctrl-S, a stalled ssh session) must not stop the event loop: the
 * timeout, forwarded signals and the rendezvous all run there.  So each of
 * gasrun's two output fds is a sink: what is written to it is queued and
 * written as the fd takes it, through a non-blocking open file description
 * of its own (the one gasrun inherited is shared with the shell and others,
 * whose O_NONBLOCK flag must not change).  Rank output stops being read
 * while a sink holds more than GR_SINK_HIGH (the ranks then block in their
 * own writes, as they would writing to the reader directly), and is read
 * again below GR_SINK_LOW.
 *
 *   pipe, FIFO, terminal, other character device: reopened non-blocking
 *                         through /proc/self/fd/N
 *   socket:               send(MSG_DONTWAIT) on the fd itself
 *   regular file, block device, or a reopen that failed: written in place,
 *                         blocking as before (a file takes what it is given)
 *
 * After the job, gr_sinks_finish() waits for the reader to take the rest:
 * for as long as it takes when the job ended by itself, at most
 * GR_SINK_GIVEUP_S without progress when it was interrupted or timed out, and
 * not at all once a terminating signal is pending.
 */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define GR_SINK_HIGH     (1u << 20)   /* queued bytes above which ranks are not read */
#define GR_SINK_LOW      (256u << 10) /* ... and below which they are read again */
#define GR_SINK_GIVEUP_S 2.0          /* a forced end waits this long without progress */

enum sink_kind { SINK_UNSET, SINK_BLOCKING, SINK_NONBLOCK, SINK_SOCKET };

struct sink {
    struct gr_watch w;      /* EPOLLOUT on wfd while something is queued */
    int fd;                 /* STDOUT_FILENO or STDERR_FILENO */
    int wfd;                /* what is written to */
    enum sink_kind kind;
    bool broken;            /* EPIPE or a dead terminal: discard from now on */
    bool full;              /* above GR_SINK_HIGH: rank output paused */
    bool gave_up;           /* a forced end stopped waiting for the reader */
    char *q;                /* queued bytes: q[head .. head + len) */
    size_t head, len, cap;
};

static struct sink sinks[2] = { { .fd = STDOUT_FILENO, .wfd = -1 },
                                { .fd = STDERR_FILENO, .wfd = -1 } };
static void (*room_cb)(int fd);   /* set while the event loop runs (gr_sinks_loop_ready) */
static bool finished;   /* gr_sinks_finish ran: no queue any more */
static bool finish_forced;

/* Decide how fd is written (once, on first use). */
static void sink_open(struct sink *s)
{
    struct stat st;
    s->kind = SINK_BLOCKING;
    s->wfd = s->fd;
    s->w.fd = -1;
    if (fstat(s->fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
        return;
    if (S_ISSOCK(st.st_mode)) {
        s->kind = SINK_SOCKET;
        return;
    }
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", s->fd);
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return; /* no /proc, or a FIFO without a reader: write in place */
    s->wfd = fd;
    s->kind = SINK_NONBLOCK;
}

static struct sink *sink_of(int fd)
{
    struct sink *s = &sinks[fd == STDERR_FILENO];
    if (s->kind == SINK_UNSET)
        sink_open(s);
    return s;
}

/* Write iov without blocking (blocking for SINK_BLOCKING); bytes taken, or -1 when broken. */
static ssize_t sink_writev(struct sink *s, const struct iovec *iov, int cnt)
{
    for (;;) {
        ssize_t n;
        if (s->kind == SINK_SOCKET) {
            struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
            n = sendmsg(s->wfd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
            n = writev(s->wfd, iov, cnt);
        }
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (s->kind != SINK_BLOCKING)
                return 0;
            /* Someone else made the shared description non-blocking. */
            struct pollfd pfd = { .fd = s->wfd, .events = POLLOUT };
            poll(&pfd, 1, 1000);
            continue;
        }
        s->broken = true;
        s->len = 0;
        return -1;
    }
}

static void sink_on_writable(struct gr_watch *w, uint32_t events);

/* Watch for room while something is queued; tell the streams when there is room again. */
static void sink_update(struct sink *s)
{
    if (s->kind == SINK_NONBLOCK || s->kind == SINK_SOCKET) {
        uint32_t want = s->len > 0 && !s->broken ? EPOLLOUT : 0;
        if (s->w.fd < 0 && want && room_cb != NULL)
            gr_loop_add(&s->w, s->wfd, want, sink_on_writable);
        else if (s->w.fd >= 0)
            gr_loop_mod(&s->w, want);
    }
    if (!s->full && s->len > GR_SINK_HIGH) {
        s->full = true;
    } else if (s->full && s->len < GR_SINK_LOW) {
        s->full = false;
        if (room_cb != NULL)
            room_cb(s->fd);
    }
}

/* Write out what is queued, as far as the fd takes it now. */
static void sink_push(struct sink *s)
{
    while (s->len > 0 && !s->broken) {
        struct iovec iov = { .iov_base = s->q + s->head, .iov_len = s->len };
        ssize_t n = sink_writev(s, &iov, 1);
        if (n <= 0)
            break;
        s->head += (size_t)n;
        s->len -= (size_t)n;
    }
    if (s->len == 0)
        s->head = 0;
}

static void sink_on_writable(struct gr_watch *w, uint32_t events)
{
    struct sink *s = (struct sink *)w;
    sink_push(s);
    sink_update(s);
}

/* Append bytes to the queue; false without memory. */
static bool sink_queue(struct sink *s, const char *p, size_t n)
{
    if (s->head > 0 && s->head + s->len + n > s->cap) {
        memmove(s->q, s->q + s->head, s->len);
        s->head = 0;
    }
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 64 * 1024;
        while (cap < s->len + n)
            cap *= 2;
        char *q = realloc(s->q, cap);
        if (q == NULL)
            return false;
        s->q = q;
        s->cap = cap;
    }
    memcpy(s->q + s->head + s->len, p, n);
    s->len += n;
    return true;
}

/* Write p[0..n) through, waiting for room however long it takes (no memory to queue it). */
static void sink_write_through(struct sink *s, const char *p, size_t n)
{
    sink_push(s);
    while (n > 0 && !s->broken) {
        if (s->len == 0) {
            struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
            ssize_t w = sink_writev(s, &iov, 1);
            if (w > 0) {
                p += w;
                n -= (size_t)w;
                continue;
            }
        }
        struct pollfd pfd = { .fd = s->wfd, .events = POLLOUT };
        poll(&pfd, 1, 1000);
        sink_push(s);
    }
}

void gr_sink_writev(int fd, const struct iovec *iov, int cnt)
{
    static int depth;  /* a message about the sink itself goes out as it can */
    struct sink *s = sink_of(fd);
    if (s->broken || cnt <= 0)
        return;
    int i = 0;
    size_t off = 0;
    /* A file (or a description that could not be reopened) is written in place and never
     * queued: nothing would push a queue of it, as no room is watched for. */
    if (s->kind == SINK_BLOCKING || (finished && !finish_forced)) {
        for (; i < cnt; i++)
            sink_write_through(s, iov[i].iov_base, iov[i].iov_len);
        return;
    }
    if (s->len == 0 || finished || depth > 0) { /* nothing ahead of it: straight to the fd */
        ssize_t n = sink_writev(s, iov, cnt);
        if (n < 0 || finished || depth > 0)
            return; /* after a forced end: what the reader does not take now is dropped */
        size_t left = (size_t)n;
        for (; i < cnt && left >= iov[i].iov_len; i++)
            left -= iov[i].iov_len;
        off = left;
    }
    depth++;
    for (; i < cnt; i++, off = 0)
        if (!sink_queue(s, (const char *)iov[i].iov_base + off, iov[i].iov_len - off))
            sink_write_through(s, (const char *)iov[i].iov_base + off, iov[i].iov_len - off);
    sink_update(s);
    depth--;
}

bool gr_sink_full(int fd)
{
    return sink_of(fd)->full;
}

void gr_sinks_loop_ready(void (*on_room)(int fd))
{
    room_cb = on_room;
    for (int i = 0; i < 2; i++)
        if (sinks[i].kind != SINK_UNSET)
            sink_update(&sinks[i]);
}

/* Wait until fd's queue is written (see the top for how long). */
static void sink_flush(struct sink *s, bool forced)
{
    double last = gr_now();
    sink_push(s);
    while (s->len > 0 && !s->broken && !s->gave_up && !gr_signals_terminating_pending()) {
        struct pollfd pfd = { .fd = s->wfd, .events = POLLOUT };
        poll(&pfd, 1, 200);
        size_t before = s->len;
        sink_push(s);
        if (s->len < before)
            last = gr_now();
        else if (forced && gr_now() - last > GR_SINK_GIVEUP_S)
            s->gave_up = true; /* once: the rest of the teardown does not wait again */
    }
    sink_update(s);
}

bool gr_sink_settle(int fd, bool forced)
{
    struct sink *s = sink_of(fd);
    sink_flush(s, forced);
    return !s->full;
}

void gr_sinks_finish(bool forced)
{
    room_cb = NULL;
    for (int i = 0; i < 2; i++) {
        struct sink *s = &sinks[i];
        if (s->kind == SINK_UNSET)
            continue;
        if (s->w.fd >= 0)
            gr_loop_del(&s->w);
        sink_flush(s, forced);
        s->len = s->head = 0;
    }
    finished = true;
    finish_forced = forced;
}
