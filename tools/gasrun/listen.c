/*
 * listen.c - the rendezvous' TCP side: ranks on other hosts connect here.
 *
 * One listener per distinct local address that some host reaches gasrun at
 * (hostaddr.c), or the one --rendezvous address; each host's ranks are told theirs
 * in GASRUN_BOOT_ADDR.  An accepted connection is not trusted: it must send
 * the HELLO of a rank that this job started on another host, with the job
 * key, within the ranks' GAS_BOOT_TIMEOUT (hello_window_s).  Only then is it handed, with the HELLO
 * already read, to the rendezvous server.  Anything else (another protocol,
 * a first message that is not a HELLO, a wrong key, a rank that is local,
 * connected already or whose launcher has exited, silence) is refused: the
 * connection is closed and nothing is ever sent on it.  At most GR_AUTH_MAX
 * connections wait for their HELLO; one more drops the oldest.  Refusals are
 * counted, logged at most once a second, and summed up at the end.
 */
#include "gasrun.h"
#include "log.h"
#include "rendezvous.h"
#include "runtime/boot_wire.h"
#include "runtime/config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MSG_LEN   (12 + GAS_BOOT_HELLO_LEN)   /* header + HELLO (or RESUME) payload */
#define ACCEPTS_PER_EVENT 64
#define REFUSE_LOG_S    1.0     /* at most one refusal message per second */
#define ACCEPT_PAUSE_S  1.0     /* after EMFILE and the like */

struct listener {
    struct gr_watch w;          /* first */
    struct gr_net *net;
    struct sockaddr_storage ss; /* the address (its port once bound) */
    socklen_t len;
    char text[GAS_BOOT_ADDR_MAX];
};

struct pending {
    struct gr_watch w;          /* first */
    struct gr_net *net;
    struct pending *prev, *next;
    int fd;
    double deadline;
    size_t len;
    unsigned char buf[HELLO_MSG_LEN];
    char peer[GAS_BOOT_ADDR_MAX];
};

struct gr_net {
    struct gr_job *job;
    struct listener *ls;
    int nls;
    struct pending *head, *tail;    /* oldest first */
    int npending;
    double paused_until;            /* accepting stopped until then, or 0 */
    unsigned long refused, unlogged;
    double logged_at;
};

/* ---- refusing ------------------------------------------------------------ */

static void pending_unlink(struct pending *p)
{
    struct gr_net *net = p->net;
    *(p->prev ? &p->prev->next : &net->head) = p->next;
    *(p->next ? &p->next->prev : &net->tail) = p->prev;
    net->npending--;
    gr_loop_del(&p->w);
    gr_loop_defer_free(p);
}

static void note_refusal(struct gr_net *net, const char *peer, const char *why)
{
    net->refused++;
    double now = gr_now();
    if (net->logged_at > 0 && now - net->logged_at < REFUSE_LOG_S) {
        net->unlogged++;
        return;
    }
    if (net->unlogged > 0)
        gr_msg("refused a connection to the rendezvous from %s: %s (and %lu more since the "
               "last message)", peer, why, net->unlogged);
    else
        gr_msg("refused a connection to the rendezvous from %s: %s", peer, why);
    net->logged_at = now;
    net->unlogged = 0;
}

/* Close without a word: read what is there, so that the close is a FIN. */
static void close_quietly(int fd)
{
    char sink[4096];
    for (int i = 0; i < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++) {
    }
    close(fd);
}

static void refuse(struct pending *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(struct pending *p, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    note_refusal(p->net, p->peer, why);
    close_quietly(p->fd);
    pending_unlink(p);
}

/* ---- the HELLO check ----------------------------------------------------- */

/* Check what has come so far; refuse, hand over, or wait for more. */
static void pending_check(struct pending *p)
{
    struct gr_job *job = p->net->job;
    const unsigned char *b = p->buf;
    if (p->len >= 4 && gas_boot_get_u32(b) != GAS_BOOT_WIRE_MAGIC) {
        refuse(p, "not the boot protocol");
        return;
    }
    unsigned type = p->len >= 12 ? (unsigned)b[4] | ((unsigned)b[5] << 8) : 0;
    if (p->len >= 12) {
        uint32_t len = gas_boot_get_u32(b + 8);
        if (type != GAS_BOOT_HELLO && type != GAS_BOOT_RESUME) {
            refuse(p, "first message is not a HELLO (type %u)", type);
            return;
        }
        if (len != HELLO_MSG_LEN - 12) {
            refuse(p, "HELLO of %u bytes", len);
            return;
        }
    }
    if (p->len < HELLO_MSG_LEN)
        return;
    bool resume = type == GAS_BOOT_RESUME;
    if (gas_boot_get_u64(b + 12 + 4) != job->key) {
        refuse(p, "wrong job key");
        return;
    }
    uint32_t rank = gas_boot_get_u32(b + 12 + 12);
    const struct gr_rank *rk = rank < (uint32_t)job->nranks ? &job->ranks[rank] : NULL;
    /* A RESUME replaces the connection of a rank that had one (it broke). */
    const char *why = rk == NULL              ? "which is not in the job"
                      : !rk->remote           ? "which runs on this host (it has its own socket)"
                      : rk->tcp && !resume    ? "which is connected already"
                      : !rk->tcp && resume    ? "which never connected"
                      : !rk->running          ? "whose launcher has exited"
                                              : NULL;
    if (why != NULL) {
        refuse(p, "%s with the job key as rank %u, %s", resume ? "RESUME" : "HELLO", rank, why);
        return;
    }
    /* The rendezvous takes it from here (version check, HELLO_OK). */
    int fd = p->fd;
    char peer[GAS_BOOT_ADDR_MAX];
    unsigned char hello[HELLO_MSG_LEN];
    memcpy(peer, p->peer, sizeof peer);
    memcpy(hello, p->buf, sizeof hello);
    pending_unlink(p);
    job->ranks[rank].tcp = true;
    gr_info("rank %u connected %sfrom %s", rank, resume ? "again " : "", peer);
    int rc = gr_rdv_add_conn(job->rdv, fd, (int)rank, hello, sizeof hello);
    if (rc < 0)
        gr_job_fail(job, 1, "cannot serve the boot connection of rank %u: %s", rank,
                    strerror(-rc));
    gr_launch_more(job);    /* its launch is no longer in flight */
}

static void pending_on_event(struct gr_watch *w, uint32_t events)
{
    struct pending *p = (struct pending *)w;
    ssize_t n = recv(p->fd, p->buf + p->len, sizeof p->buf - p->len, MSG_DONTWAIT);
    if (n > 0) {
        p->len += (size_t)n;
        pending_check(p);
    } else if (n == 0) {
        refuse(p, "closed before a HELLO");
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        refuse(p, "%s before a HELLO", strerror(errno));
    }
}

/* ---- accepting ----------------------------------------------------------- */

/*
 * How long a connection may take to say HELLO: the ranks' own time to
 * connect, GAS_BOOT_TIMEOUT (gasrun hands its GAS_* environment to them), so
 * that a HELLO that a lossy network holds back is not refused while its rank
 * still waits; GR_AUTH_TIMEOUT_S when unset, 0 or unreadable (the rank then
 * reports a bad value itself).  At least 1 s.
 */
static double hello_window_s(void)
{
    static double cached = -1;
    if (cached > 0)
        return cached;
    cached = GR_AUTH_TIMEOUT_S;
    const char *t = getenv("GAS_BOOT_TIMEOUT"), *why = NULL;
    uint64_t ns = 0;
    if (t != NULL && gas_rt_config_parse(GAS_CFG_T_TIME, NULL, t, &ns, &why) == 0 && ns > 0)
        cached = ns < 1000000000u ? 1 : (double)ns / 1e9;
    return cached;
}

static void accept_one(struct listener *l, int fd, const struct sockaddr_storage *ss,
                       socklen_t len)
{
    struct gr_net *net = l->net;
    char peer[GAS_BOOT_ADDR_MAX];
    gas_boot_addr_format((const struct sockaddr *)ss, len, peer, sizeof peer);
    if (net->npending >= GR_AUTH_MAX)
        refuse(net->head, "dropped: more than %d connections are waiting for a HELLO",
               GR_AUTH_MAX);
    struct pending *p = calloc(1, sizeof *p);
    if (p == NULL) {
        note_refusal(net, peer, "out of memory");
        close(fd);
        return;
    }
    p->net = net;
    p->fd = fd;
    p->deadline = gr_now() + hello_window_s();
    memcpy(p->peer, peer, sizeof p->peer);
    p->w.fd = -1;
    if (gr_loop_add(&p->w, fd, EPOLLIN, pending_on_event) < 0) {
        note_refusal(net, peer, "cannot watch it");
        close(fd);
        free(p);
        return;
    }
    gas_boot_tcp_tune(fd);
    p->prev = net->tail;
    *(net->tail ? &net->tail->next : &net->head) = p;
    net->tail = p;
    net->npending++;
}

static void listener_on_event(struct gr_watch *w, uint32_t events)
{
    struct listener *l = (struct listener *)w;
    struct gr_net *net = l->net;
    for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(w->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            accept_one(l, fd, &ss, len);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        /* EMFILE, ENOBUFS...: the connection waits in the backlog; stop
         * watching for a while instead of spinning. */
        note_refusal(net, l->text, strerror(errno));
        net->paused_until = gr_now() + ACCEPT_PAUSE_S;
        for (int j = 0; j < net->nls; j++)
            gr_loop_mod(&net->ls[j].w, 0);
        return;
    }
}

/* ---- set-up -------------------------------------------------------------- */

static bool same_ip(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0 &&
           x->sin6_scope_id == y->sin6_scope_id;
}

static void set_port(struct sockaddr_storage *ss, unsigned port)
{
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static int listener_open(struct gr_net *net, struct listener *l)
{
    char want[GAS_BOOT_ADDR_MAX];
    gas_boot_addr_format((struct sockaddr *)&l->ss, l->len, want, sizeof want);
    int fd = socket(l->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        goto err;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (l->ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&l->ss, l->len) < 0 || listen(fd, SOMAXCONN) < 0)
        goto err_close;
    l->len = sizeof l->ss;
    if (getsockname(fd, (struct sockaddr *)&l->ss, &l->len) < 0)
        goto err_close;
    gas_boot_addr_format((struct sockaddr *)&l->ss, l->len, l->text, sizeof l->text);
    l->net = net;
    l->w.fd = -1;
    if (gr_loop_add(&l->w, fd, EPOLLIN, listener_on_event) < 0) {
        close(fd);
        return -1;
    }
    return 0;

err_close:;
    int err = errno;
    close(fd);
    errno = err;
err:
    gr_msg("cannot listen for remote ranks on %s: %s%s", want, strerror(errno),
           errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
    return -1;
}

/* The listener for host h's address, added when new; its index or -1. */
static int listener_for(struct gr_net *net, const struct gr_host *h)
{
    struct listener l = { .w.fd = -1 };
    if (net->job->opts.bind != NULL) {
        if (net->nls > 0)
            return 0;
        char with_port[GAS_BOOT_ADDR_MAX + 8];
        snprintf(with_port, sizeof with_port, "%s:0", net->job->opts.bind);
        if (gas_boot_addr_parse(net->job->opts.bind, &l.ss, &l.len) < 0)
            gas_boot_addr_parse(with_port, &l.ss, &l.len);   /* checked by options.c */
    } else {
        if (gr_host_local_addr(h, &l.ss, &l.len) < 0)
            return -1;
        set_port(&l.ss, 0);
        for (int i = 0; i < net->nls; i++)
            if (same_ip(&net->ls[i].ss, &l.ss))
                return i;
    }
    struct listener *n = realloc(net->ls, (size_t)(net->nls + 1) * sizeof *n);
    if (n == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    /* The watches move with the array: nothing is registered yet. */
    net->ls = n;
    net->ls[net->nls] = l;
    return net->nls++;
}

int gr_net_setup(struct gr_job *job)
{
    if (job->nremote == 0)
        return 0;
    struct gr_net *net = calloc(1, sizeof *net);
    if (net == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    net->job = job;
    job->net = net;
    int *which = calloc((size_t)job->nhosts, sizeof *which);
    if (which == NULL) {
        gr_msg("out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < job->nhosts && rc == 0; i++) {
        const struct gr_host *h = &job->hosts[i];
        which[i] = -1;
        if (h->nranks > 0 && !h->local && (which[i] = listener_for(net, h)) < 0)
            rc = -1;
    }
    for (int j = 0; j < net->nls && rc == 0; j++)
        rc = listener_open(net, &net->ls[j]);
    for (int i = 0; i < job->nhosts && rc == 0; i++) {
        struct gr_host *h = &job->hosts[i];
        if (which[i] < 0)
            continue;
        memcpy(h->boot_addr, net->ls[which[i]].text, sizeof h->boot_addr);
        gr_info("host %s: ranks connect to %s", h->name, h->boot_addr);
    }
    free(which);
    return rc;
}

double gr_net_deadline(const struct gr_job *job)
{
    const struct gr_net *net = job->net;
    if (net == NULL)
        return -1;
    double next = net->head ? net->head->deadline : -1;
    if (net->paused_until > 0 && (next < 0 || net->paused_until < next))
        next = net->paused_until;
    return next;
}

void gr_net_tick(struct gr_job *job, double now)
{
    struct gr_net *net = job->net;
    if (net == NULL)
        return;
    while (net->head != NULL && net->head->deadline <= now)
        refuse(net->head, "no HELLO within %.0f s (GAS_BOOT_TIMEOUT)", hello_window_s());
    if (net->paused_until > 0 && now >= net->paused_until) {
        net->paused_until = 0;
        for (int j = 0; j < net->nls; j++)
            gr_loop_mod(&net->ls[j].w, EPOLLIN);
    }
}

void gr_net_fini(struct gr_job *job)
{
    struct gr_net *net = job->net;
    if (net == NULL)
        return;
    while (net->head != NULL) {
        close(net->head->fd);
        pending_unlink(net->head);
    }
    for (int j = 0; j < net->nls; j++) {
        if (net->ls[j].w.fd >= 0) {
            int fd = net->ls[j].w.fd;
            gr_loop_del(&net->ls[j].w);
            close(fd);
        }
    }
    if (net->refused > 0)
        gr_msg("refused %lu connection%s to the rendezvous port in all", net->refused,
               net->refused == 1 ? "" : "s");
    free(net->ls);
    free(net);
    job->net = NULL;
}
