/*
 * stdio.c - rank output to gasrun's stdout/stderr, and rank 0's stdin.
 *
 * Each rank's stdout and stderr are pipes read by the event loop.  In line
 * mode (tagging on, or more than one rank) a stream is cut into lines and
 * every line goes out whole in one write with its "[r] " tag, so lines of
 * different ranks never mix.  A line longer than GR_LINE_MAX is cut: the piece
 * goes out as a line of its own (tagged, with a newline added; a newline that
 * comes right after the cut is that one), so memory per stream stays bounded.  A last line without a newline goes out at EOF (with
 * a newline added when tagged).  Untagged single-rank output passes through
 * as it comes.
 *
 * Rank 0 inherits gasrun's stdin, except when that is a terminal: rank 0 is
 * in a process group of its own, which the shell's job control does not know,
 * so reading the terminal would stop it (SIGTTIN) for good.  gasrun relays
 * the terminal through a pipe instead, and reads the terminal only while its
 * own group is the terminal's foreground group: a job started in the
 * background (or sent there with Ctrl-Z and bg) keeps running, rank 0 waits
 * for input, and `fg` lets it flow.
 */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOV_BATCH       256
#define STREAM_MIN_CAP  4096
#define READS_PER_EVENT 8

/* ---- writing to gasrun's stdout/stderr (through the sinks, sink.c) ------- */

struct outq {
    int fd;
    int n;
    struct iovec iov[IOV_BATCH];
};

static void outq_flush(struct outq *q)
{
    gr_sink_writev(q->fd, q->iov, q->n);
    q->n = 0;
}

static void outq_add(struct outq *q, const void *p, size_t len)
{
    if (len == 0)
        return;
    if (q->n == IOV_BATCH)
        outq_flush(q);
    q->iov[q->n++] = (struct iovec){ .iov_base = (void *)p, .iov_len = len };
}

/* ---- rank output streams ------------------------------------------------- */

static bool line_mode(const struct gr_job *job)
{
    return job->tag || job->nranks > 1;
}

/* Write out what is ready: whole lines; a full buffer; everything at EOF. */
static void stream_emit(struct gr_stream *s, bool eof)
{
    const struct gr_job *job = s->job;
    struct outq q = { .fd = s->out_fd };
    size_t start = 0;
    if (!line_mode(job)) {
        outq_add(&q, s->buf, s->len);
        start = s->len;
    } else if (job->tag) {
        const char *nl;
        /* The line cut last time ended exactly at the cut: its newline was
         * written with the piece already. */
        if (s->cut && s->len > 0) {
            start = s->buf[0] == '\n';
            s->cut = false;
        }
        while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
            size_t end = (size_t)(nl - s->buf) + 1;
            outq_add(&q, s->tag, s->taglen);
            outq_add(&q, s->buf + start, end - start);
            start = end;
        }
    } else {
        const char *nl = memrchr(s->buf, '\n', s->len);
        if (nl != NULL) {
            start = (size_t)(nl - s->buf) + 1;
            outq_add(&q, s->buf, start);
        }
    }
    if (start < s->len && (eof || s->len - start >= GR_LINE_MAX)) {
        if (job->tag)
            outq_add(&q, s->tag, s->taglen);
        outq_add(&q, s->buf + start, s->len - start);
        if (job->tag)
            outq_add(&q, "\n", 1);
        s->cut = job->tag && !eof;
        start = s->len;
    }
    outq_flush(&q);
    if (start > 0) {
        memmove(s->buf, s->buf + start, s->len - start);
        s->len -= start;
    }
}

static void stream_close(struct gr_stream *s)
{
    if (s->fd < 0)
        return;
    stream_emit(s, true);
    gr_loop_del(&s->w);
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* Read once; 1 on data, 0 on EAGAIN, -1 when the stream was closed. */
static int stream_read_once(struct gr_stream *s)
{
    if (s->cap - s->len < STREAM_MIN_CAP / 4 && s->cap < GR_LINE_MAX) {
        size_t cap = s->cap ? s->cap * 2 : STREAM_MIN_CAP;
        if (cap > GR_LINE_MAX)
            cap = GR_LINE_MAX;
        char *p = realloc(s->buf, cap);
        if (p != NULL) {
            s->buf = p;
            s->cap = cap;
        } else if (s->cap == s->len) {
            stream_emit(s, true);       /* no memory: flush what we hold */
        }
    }
    if (s->cap == s->len)
        return 0;
    ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
    if (n > 0) {
        s->len += (size_t)n;
        stream_emit(s, false);
        return 1;
    }
    if (n < 0 && errno == EINTR)
        return 1;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    stream_close(s);    /* EOF (or an error, treated alike) */
    return -1;
}

/* The job whose streams a sink with room again resumes. */
static struct gr_job *streams_job;

static void stream_on_event(struct gr_watch *w, uint32_t events)
{
    struct gr_stream *s = (struct gr_stream *)w;
    for (int i = 0; i < READS_PER_EVENT; i++) {
        if (gr_sink_full(s->out_fd)) {
            gr_loop_mod(&s->w, 0);  /* read again when the reader catches up */
            return;
        }
        if (stream_read_once(s) <= 0)
            return;
    }
}

/* gasrun's fd out_fd took enough of its queue: read the ranks' streams to it again. */
static void streams_resume(int out_fd)
{
    struct gr_job *job = streams_job;
    for (int r = 0; job != NULL && r < job->nranks; r++) {
        struct gr_stream *s = out_fd == STDOUT_FILENO ? &job->ranks[r].out : &job->ranks[r].err;
        if (s->fd >= 0)
            gr_loop_mod(&s->w, EPOLLIN);
    }
}

void gr_streams_start(struct gr_job *job)
{
    streams_job = job;
    gr_sinks_loop_ready(streams_resume);
}

int gr_stream_open(struct gr_job *job, struct gr_stream *s, int fd, int rank, int out_fd)
{
    s->job = job;
    s->fd = fd;
    s->out_fd = out_fd;
    s->rank = rank;
    s->taglen = (size_t)snprintf(s->tag, sizeof s->tag, "[%d] ", rank);
    s->buf = NULL;
    s->len = s->cap = 0;
    int rc = gr_loop_add(&s->w, fd, gr_sink_full(out_fd) ? 0 : EPOLLIN, stream_on_event);
    if (rc < 0) {
        close(fd);
        s->fd = -1;
    }
    return rc;
}

/* At the end: every writer is dead, so read each pipe to its end, and let
 * the reader take it all (sink.c: not long when the end was forced). */
void gr_streams_drain(struct gr_job *job, bool forced)
{
    for (int r = 0; r < job->nranks; r++) {
        struct gr_stream *ss[2] = { &job->ranks[r].out, &job->ranks[r].err };
        for (int i = 0; i < 2; i++) {
            struct gr_stream *s = ss[i];
            /* Bounded: a writer that escaped the sweep cannot keep us here. */
            for (int n = 0; n < 4096 && s->fd >= 0; n++) {
                if (gr_sink_full(s->out_fd) && !gr_sink_settle(s->out_fd, forced))
                    break; /* the reader does not take it: leave the rest */
                if (stream_read_once(s) == 0)
                    break;
            }
            stream_close(s);
        }
    }
    gr_sinks_finish(forced);
}

/* ---- stdin relay for a terminal ------------------------------------------ */

static struct {
    bool active;
    bool eof;
    bool fg;                /* gasrun's group has the terminal: read it */
    int pipe_w;
    struct gr_watch in_w, out_w;
    char buf[4096];
    size_t len;
} relay = { .pipe_w = -1 };

void gr_stdin_close(void)
{
    if (!relay.active)
        return;
    relay.active = false;
    gr_loop_del(&relay.in_w);
    gr_loop_del(&relay.out_w);
    close(relay.pipe_w);
    relay.pipe_w = -1;
}

static void relay_update(void)
{
    while (relay.active && relay.len > 0) {
        ssize_t n = write(relay.pipe_w, relay.buf, relay.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0) {            /* rank 0 closed its stdin or is gone */
            gr_stdin_close();
            return;
        }
        memmove(relay.buf, relay.buf + n, relay.len - (size_t)n);
        relay.len -= (size_t)n;
    }
    if (!relay.active)
        return;
    if (relay.eof && relay.len == 0) {
        gr_stdin_close();
        return;
    }
    gr_loop_mod(&relay.in_w,
                relay.fg && !relay.eof && relay.len < sizeof relay.buf ? EPOLLIN : 0);
    gr_loop_mod(&relay.out_w, relay.len > 0 ? EPOLLOUT : 0);
}

static void relay_on_stdin(struct gr_watch *w, uint32_t events)
{
    ssize_t n = read(STDIN_FILENO, relay.buf + relay.len, sizeof relay.buf - relay.len);
    if (n > 0)
        relay.len += (size_t)n;
    else if (n < 0 && errno == EIO && tcgetpgrp(STDIN_FILENO) != getpgrp())
        relay.fg = false;   /* sent to the background (SIGTTIN is ignored): wait for fg */
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        relay.eof = true;
    relay_update();
}

static void relay_on_pipe(struct gr_watch *w, uint32_t events)
{
    relay_update();
}

int gr_stdin_setup(struct gr_job *job)
{
    job->rank0_stdin = STDIN_FILENO;
    if (!isatty(STDIN_FILENO))
        return 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        gr_msg("pipe for rank 0's stdin: %s", strerror(errno));
        return -errno;
    }
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    relay.pipe_w = p[1];
    relay.active = true;
    relay.fg = tcgetpgrp(STDIN_FILENO) == getpgrp();
    job->rank0_stdin = p[0];
    if (gr_loop_add(&relay.in_w, STDIN_FILENO, relay.fg ? EPOLLIN : 0, relay_on_stdin) < 0 ||
        gr_loop_add(&relay.out_w, p[1], 0, relay_on_pipe) < 0) {
        gr_stdin_close();
        close(p[0]);
        job->rank0_stdin = job->devnull;
        return -1;
    }
    gr_info("stdin is the terminal: relaying it to rank 0");
    return 0;
}

void gr_stdin_tick(void)
{
    if (!relay.active)
        return;
    bool fg = tcgetpgrp(STDIN_FILENO) == getpgrp();
    if (fg != relay.fg) {
        relay.fg = fg;
        gr_info("stdin: gasrun is now in the %s", fg ? "foreground: relaying the terminal"
                                                    : "background: not reading the terminal");
        relay_update();
    }
}

int gr_stdin_wait_ms(void)
{
    return relay.active && !relay.fg && !relay.eof ? GR_STDIN_FG_POLL_MS : -1;
}

void gr_stdin_started(struct gr_job *job)
{
    if (job->rank0_stdin != STDIN_FILENO && job->rank0_stdin != job->devnull) {
        close(job->rank0_stdin);
        job->rank0_stdin = -1;
    }
}
