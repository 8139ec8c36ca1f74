/* rendezvous.c - serve the boot protocol of runtime/boot_wire.h (see rendezvous.h). */
#include "rendezvous.h"
#include "kvstore.h"
#include "log.h"
#include "loop.h"
#include "runtime/boot_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HDR_LEN        12u
#define HELLO_LEN      GAS_BOOT_HELLO_LEN /* version u32, key u64, rank u32, pid u32 */
#define IN_MIN_CAP     4096u
#define IN_SHRINK_CAP  (64u * 1024)
#define OUT_HIGH_WATER (8u * 1024 * 1024) /* stop reading requests past this */
#define READS_PER_EVENT 16              /* fairness between connections */

struct rdv_conn {
    struct gr_watch w;          /* first: the loop hands us &w */
    struct gr_rdv *srv;
    size_t idx;                 /* in srv->conns */
    int fd;
    int expected;               /* rank whose socket this is, or -1 */
    int rank;                   /* bound by HELLO, else -1 */
    bool in_barrier;            /* sent BARRIER, waiting for BARRIER_DONE */
    bool detached;              /* peer hung up while paused: read the rest later */
    bool out_dead;              /* peer stopped reading for good: drop replies */
    unsigned char *in;
    size_t in_len, in_cap;
    unsigned char *out;
    size_t out_off, out_len, out_cap;
};

struct rdv_rank {
    struct rdv_conn *conn;      /* bound connection, NULL when none (or closed) */
    uint32_t pid;               /* said in HELLO; a RESUME must say the same */
    bool helloed;
    bool fini;
    bool in_barrier;
};

struct gr_rdv {
    uint32_t nranks;
    uint64_t key;
    struct gr_rdv_ops ops;
    struct rdv_rank *ranks;
    uint32_t arrived;           /* ranks in the current barrier */
    uint64_t barriers_done;
    struct gr_kv *kv;
    struct rdv_conn **conns;
    size_t nconns, conns_cap;
    bool settling;
};

static void conn_resume(struct rdv_conn *c);

/* ---- connection bookkeeping ---------------------------------------------- */

static const char *conn_name(const struct rdv_conn *c, char *buf, size_t size)
{
    if (c->rank >= 0)
        snprintf(buf, size, "rank %d", c->rank);
    else if (c->expected >= 0)
        snprintf(buf, size, "rank %d", c->expected);
    else
        snprintf(buf, size, "boot connection (fd %d)", c->fd);
    return buf;
}

static bool conn_paused(const struct rdv_conn *c)
{
    return c->in_barrier || c->out_len - c->out_off > OUT_HIGH_WATER;
}

static void conn_close(struct rdv_conn *c)
{
    struct gr_rdv *s = c->srv;
    if (c->fd < 0)
        return;
    gr_loop_del(&c->w);
    close(c->fd);
    c->fd = -1;
    free(c->in);
    free(c->out);
    c->in = c->out = NULL;
    c->in_len = c->in_cap = c->out_off = c->out_len = c->out_cap = 0;

    int rank = c->rank >= 0 ? c->rank : c->expected;
    if (c->rank >= 0 && s->ranks[c->rank].conn == c)
        s->ranks[c->rank].conn = NULL;

    /* Unlink; the struct may still be named by an event of this round. */
    s->conns[c->idx] = s->conns[--s->nconns];
    s->conns[c->idx]->idx = c->idx;
    gr_loop_defer_free(c);

    if (rank >= 0 && s->ops.closed != NULL)
        s->ops.closed(s->ops.ctx, (uint32_t)rank);
}

/* The job fails; the connection cannot be trusted any further. */
static void conn_fail(struct rdv_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void conn_fail(struct rdv_conn *c, const char *fmt, ...)
{
    struct gr_rdv *s = c->srv;
    char name[64], why[512], msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s: %s", conn_name(c, name, sizeof name), why);
    s->ops.fail(s->ops.ctx, msg);
    conn_close(c);
}

static void conn_update_interest(struct rdv_conn *c)
{
    if (c->fd < 0 || c->detached)
        return;
    uint32_t ev = 0;
    if (!conn_paused(c))
        ev |= EPOLLIN;
    if (c->out_len > c->out_off)
        ev |= EPOLLOUT;
    gr_loop_mod(&c->w, ev);
}

/* ---- output -------------------------------------------------------------- */

static void conn_flush(struct rdv_conn *c)
{
    while (c->fd >= 0 && c->out_len > c->out_off) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        /* EPIPE, ECONNRESET: the rank is gone; its EOF will tell. */
        c->out_dead = true;
        c->out_off = c->out_len = 0;
    }
    if (c->out_off == c->out_len) {
        c->out_off = c->out_len = 0;
        if (c->out_cap > IN_SHRINK_CAP) {
            free(c->out);
            c->out = NULL;
            c->out_cap = 0;
        }
    }
}

static int conn_send(struct rdv_conn *c, unsigned type, const void *payload, size_t len)
{
    if (c->fd < 0 || c->out_dead)
        return 0;
    size_t need = c->out_len + HDR_LEN + len;
    if (need > c->out_cap) {
        if (c->out_off > 0) {
            memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
            c->out_len -= c->out_off;
            c->out_off = 0;
            need = c->out_len + HDR_LEN + len;
        }
        if (need > c->out_cap) {
            size_t cap = c->out_cap ? c->out_cap : 256;
            while (cap < need)
                cap *= 2;
            unsigned char *p = realloc(c->out, cap);
            if (p == NULL)
                return -ENOMEM;
            c->out = p;
            c->out_cap = cap;
        }
    }
    unsigned char *h = c->out + c->out_len;
    gas_boot_put_u32(h, GAS_BOOT_WIRE_MAGIC);
    h[4] = (unsigned char)type;
    h[5] = (unsigned char)(type >> 8);
    h[6] = h[7] = 0;
    gas_boot_put_u32(h + 8, (uint32_t)len);
    if (len > 0)
        memcpy(h + HDR_LEN, payload, len);
    bool was_paused = conn_paused(c);
    c->out_len += HDR_LEN + len;
    conn_flush(c);
    if (!was_paused && conn_paused(c) && !c->in_barrier) {
        char name[64];
        gr_info("%s does not read its replies (%zu bytes queued): pausing its requests",
                conn_name(c, name, sizeof name), c->out_len - c->out_off);
    }
    return 0;
}

/* ---- requests ------------------------------------------------------------ */

/* The checks that HELLO and RESUME (`what`) share; false when c failed. */
static bool hello_check(struct rdv_conn *c, const char *what, const unsigned char *p, size_t len,
                        uint32_t *rank_p, uint32_t *pid_p)
{
    struct gr_rdv *s = c->srv;
    if (len != HELLO_LEN) {
        conn_fail(c, "bad %s: %zu payload bytes, expected %u", what, len, HELLO_LEN);
        return false;
    }
    uint32_t version = gas_boot_get_u32(p);
    uint64_t key = gas_boot_get_u64(p + 4);
    uint32_t rank = gas_boot_get_u32(p + 12);
    if (version != GAS_BOOT_WIRE_VERSION) {
        conn_fail(c, "bad %s: boot protocol version %u, this gasrun speaks %u "
                  "(rank program and gasrun come from different libgas builds)",
                  what, version, GAS_BOOT_WIRE_VERSION);
        return false;
    }
    if (key != s->key) {
        conn_fail(c, "bad %s: wrong job key (the rank does not belong to this job)", what);
        return false;
    }
    if (rank >= s->nranks) {
        conn_fail(c, "bad %s: rank %u out of range (the job has %u ranks)", what, rank,
                  s->nranks);
        return false;
    }
    if (c->expected >= 0 && rank != (uint32_t)c->expected) {
        conn_fail(c, "bad %s: says it is rank %u on the boot socket of rank %d", what,
                  rank, c->expected);
        return false;
    }
    *rank_p = rank;
    *pid_p = gas_boot_get_u32(p + 16);
    return true;
}

static void handle_hello(struct rdv_conn *c, const unsigned char *p, size_t len)
{
    struct gr_rdv *s = c->srv;
    uint32_t rank, pid;
    if (!hello_check(c, "HELLO", p, len, &rank, &pid))
        return;
    if (s->ranks[rank].helloed) {
        conn_fail(c, "bad HELLO: rank %u already said HELLO", rank);
        return;
    }
    c->rank = (int)rank;
    s->ranks[rank].conn = c;
    s->ranks[rank].pid = pid;
    s->ranks[rank].helloed = true;
    unsigned char reply[4];
    gas_boot_put_u32(reply, s->nranks);
    if (conn_send(c, GAS_BOOT_HELLO_OK, reply, sizeof reply) < 0) {
        conn_fail(c, "out of memory queueing HELLO_OK");
        return;
    }
    if (s->ops.hello != NULL)
        s->ops.hello(s->ops.ctx, rank, pid);
}

/*
 * RESUME (boot_wire.h): the rank's connection broke in a network outage and
 * it connected again.  This connection takes the old one's place (closed
 * here if gasrun has not noticed yet: no `closed` report for it), keeps its
 * place in the barrier, and is told the barrier count.
 */
static void handle_resume(struct rdv_conn *c, const unsigned char *p, size_t len)
{
    struct gr_rdv *s = c->srv;
    uint32_t rank, pid;
    if (!hello_check(c, "RESUME", p, len, &rank, &pid))
        return;
    struct rdv_rank *r = &s->ranks[rank];
    if (!r->helloed || r->pid != pid) {
        conn_fail(c, "bad RESUME: rank %u (pid %u) %s", rank, pid,
                  r->helloed ? "is another process than the one that said HELLO"
                             : "never said HELLO");
        return;
    }
    struct rdv_conn *old = r->conn;
    if (old != NULL && old != c) {
        old->rank = old->expected = -1;
        r->conn = NULL;
        conn_close(old);
    }
    c->rank = (int)rank;
    c->in_barrier = r->in_barrier;
    r->conn = c;
    unsigned char reply[GAS_BOOT_RESUME_OK_LEN];
    gas_boot_put_u32(reply, s->nranks);
    gas_boot_put_u64(reply + 4, s->barriers_done);
    gas_boot_put_u32(reply + 12, r->in_barrier);
    if (conn_send(c, GAS_BOOT_RESUME_OK, reply, sizeof reply) < 0) {
        conn_fail(c, "out of memory queueing RESUME_OK");
        return;
    }
    if (s->ops.resumed != NULL)
        s->ops.resumed(s->ops.ctx, rank);
}

static void handle_kv_put(struct rdv_conn *c, const unsigned char *p, size_t len)
{
    const unsigned char *nul = memchr(p, '\0', len);
    if (nul == NULL) {
        conn_fail(c, "malformed KV_PUT: key is not NUL-terminated");
        return;
    }
    size_t klen = (size_t)(nul - p);
    if (gr_kv_put(c->srv->kv, (uint32_t)c->rank, (const char *)p, klen, nul + 1,
                  len - klen - 1) < 0)
        conn_fail(c, "out of memory storing KV_PUT '%.*s' (%zu bytes)", (int)klen, p, len);
}

/* GAS_BOOT_KEY_JOINED: the ranks that said HELLO, as boot_wire.h lays it out. */
static void reply_joined(struct rdv_conn *c)
{
    struct gr_rdv *s = c->srv;
    size_t n = (s->nranks + 7) / 8;
    unsigned char *bits = calloc(n ? n : 1, 1);
    if (bits == NULL) {
        conn_fail(c, "out of memory answering a KV_GET of %s", GAS_BOOT_KEY_JOINED);
        return;
    }
    for (uint32_t r = 0; r < s->nranks; r++)
        if (s->ranks[r].helloed)
            bits[r / 8] |= (unsigned char)(1u << (r % 8));
    if (conn_send(c, GAS_BOOT_KV_VALUE, bits, n) < 0)
        conn_fail(c, "out of memory queueing a KV_GET reply");
    free(bits);
}

static void handle_kv_get(struct rdv_conn *c, const unsigned char *p, size_t len)
{
    struct gr_rdv *s = c->srv;
    if (len < 4) {
        conn_fail(c, "malformed KV_GET: %zu payload bytes", len);
        return;
    }
    uint32_t owner = gas_boot_get_u32(p);
    if (owner >= s->nranks) {
        conn_fail(c, "KV_GET of rank %u, out of range (the job has %u ranks)", owner, s->nranks);
        return;
    }
    /* The key ends at its NUL, or at the end of the payload. */
    const char *key = (const char *)p + 4;
    size_t klen = strnlen(key, len - 4);
    if (klen == strlen(GAS_BOOT_KEY_JOINED) && memcmp(key, GAS_BOOT_KEY_JOINED, klen) == 0) {
        reply_joined(c);
        return;
    }
    size_t vlen = 0;
    const void *val = gr_kv_get(s->kv, owner, key, klen, &vlen);
    int rc = val != NULL ? conn_send(c, GAS_BOOT_KV_VALUE, val, vlen)
                         : conn_send(c, GAS_BOOT_KV_MISSING, NULL, 0);
    if (rc < 0)
        conn_fail(c, "out of memory queueing a KV_GET reply");
}

static void handle_barrier(struct rdv_conn *c)
{
    struct gr_rdv *s = c->srv;
    struct rdv_rank *r = &s->ranks[c->rank];
    /* Cannot already be in one: a waiting connection is not read. */
    r->in_barrier = true;
    c->in_barrier = true;
    s->arrived++;
    if (s->ops.barrier != NULL)
        s->ops.barrier(s->ops.ctx);
}

static void handle_abort(struct rdv_conn *c, const unsigned char *p, size_t len)
{
    struct gr_rdv *s = c->srv;
    if (len < 4) {
        conn_fail(c, "malformed ABORT: %zu payload bytes", len);
        return;
    }
    int32_t code = (int32_t)gas_boot_get_u32(p);
    size_t mlen = len - 4;
    while (mlen > 0 && (p[4 + mlen - 1] == '\n' || p[4 + mlen - 1] == '\0'))
        mlen--;
    char *msg = malloc(mlen + 1);
    if (msg == NULL) {
        s->ops.abort(s->ops.ctx, (uint32_t)c->rank, code, "(message lost: out of memory)");
        return;
    }
    for (size_t i = 0; i < mlen; i++) {
        unsigned char ch = p[4 + i];
        msg[i] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : (char)ch;
    }
    msg[mlen] = '\0';
    s->ops.abort(s->ops.ctx, (uint32_t)c->rank, code, msg);
    free(msg);
}

static const char *msg_type_name(unsigned type)
{
    static const char *const names[] = {
        [GAS_BOOT_HELLO] = "HELLO", [GAS_BOOT_HELLO_OK] = "HELLO_OK",
        [GAS_BOOT_KV_PUT] = "KV_PUT", [GAS_BOOT_KV_GET] = "KV_GET",
        [GAS_BOOT_KV_VALUE] = "KV_VALUE", [GAS_BOOT_KV_MISSING] = "KV_MISSING",
        [GAS_BOOT_BARRIER] = "BARRIER", [GAS_BOOT_BARRIER_DONE] = "BARRIER_DONE",
        [GAS_BOOT_ABORT] = "ABORT", [GAS_BOOT_FINI] = "FINI",
        [GAS_BOOT_RESUME] = "RESUME", [GAS_BOOT_RESUME_OK] = "RESUME_OK",
    };
    if (type < sizeof names / sizeof names[0] && names[type] != NULL)
        return names[type];
    return "unknown";
}

static void handle_msg(struct rdv_conn *c, unsigned type, const unsigned char *p, size_t len)
{
    struct gr_rdv *s = c->srv;
    if (c->rank < 0) {
        if (type == GAS_BOOT_HELLO)
            handle_hello(c, p, len);
        else if (type == GAS_BOOT_RESUME)
            handle_resume(c, p, len);
        else
            conn_fail(c, "bad HELLO: first message is %s (type %u), not HELLO",
                      msg_type_name(type), type);
        return;
    }
    switch (type) {
    case GAS_BOOT_KV_PUT:
        handle_kv_put(c, p, len);
        break;
    case GAS_BOOT_KV_GET:
        handle_kv_get(c, p, len);
        break;
    case GAS_BOOT_BARRIER:
        handle_barrier(c);
        break;
    case GAS_BOOT_ABORT:
        handle_abort(c, p, len);
        break;
    case GAS_BOOT_FINI:
        s->ranks[c->rank].fini = true;
        if (s->ops.fini != NULL)
            s->ops.fini(s->ops.ctx, (uint32_t)c->rank);
        break;
    default:
        conn_fail(c, "protocol error: unexpected %s message (type %u)", msg_type_name(type), type);
        break;
    }
}

/* ---- input --------------------------------------------------------------- */

static bool conn_reserve_in(struct rdv_conn *c, size_t need)
{
    if (need <= c->in_cap)
        return true;
    size_t cap = c->in_cap ? c->in_cap : IN_MIN_CAP;
    while (cap < need)
        cap *= 2;
    unsigned char *p = realloc(c->in, cap);
    if (p == NULL)
        return false;
    c->in = p;
    c->in_cap = cap;
    return true;
}

/* Handle every whole message buffered, until paused or closed. */
static void conn_parse(struct rdv_conn *c)
{
    size_t off = 0;
    while (c->fd >= 0 && !conn_paused(c) && c->in_len - off >= HDR_LEN) {
        const unsigned char *h = c->in + off;
        uint32_t len = gas_boot_get_u32(h + 8);
        unsigned type = (unsigned)h[4] | ((unsigned)h[5] << 8);
        if (gas_boot_get_u32(h) != GAS_BOOT_WIRE_MAGIC) {
            conn_fail(c, "%s: bad message header (magic %#x)",
                      c->rank < 0 ? "bad HELLO" : "protocol error", gas_boot_get_u32(h));
            return;
        }
        if (len > GAS_BOOT_MAX_PAYLOAD) {
            conn_fail(c, "protocol error: %s message of %u bytes (limit %u)",
                      msg_type_name(type), len, GAS_BOOT_MAX_PAYLOAD);
            return;
        }
        if (c->in_len - off < HDR_LEN + len)
            break;
        off += HDR_LEN + len;
        handle_msg(c, type, h + HDR_LEN, len);
    }
    if (c->fd < 0)
        return;
    if (off > 0) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    if (c->in_len == 0 && c->in_cap > IN_SHRINK_CAP) {
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
}

/* Read and handle requests until EAGAIN, EOF, a pause, or the fairness bound. */
static void conn_read(struct rdv_conn *c)
{
    for (int round = 0; c->fd >= 0 && !conn_paused(c); round++) {
        if (round >= READS_PER_EVENT && !c->detached)
            return; /* level-triggered: the loop comes back */
        size_t need = IN_MIN_CAP;
        if (c->in_len >= HDR_LEN)
            need = HDR_LEN + gas_boot_get_u32(c->in + 8);
        if (need > HDR_LEN + GAS_BOOT_MAX_PAYLOAD)
            need = HDR_LEN + GAS_BOOT_MAX_PAYLOAD; /* parse rejects it */
        if (need < c->in_len + 512)
            need = c->in_len + IN_MIN_CAP;
        if (!conn_reserve_in(c, need)) {
            conn_fail(c, "out of memory buffering a request");
            return;
        }
        ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
        if (n > 0) {
            c->in_len += (size_t)n;
            conn_parse(c);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !c->detached)
            return;
        /* EOF or a reset: the rank is done with this connection (its exit
         * status, not this, decides the job), or it broke in a network
         * outage and the rank connects again (RESUME).  A partial request is
         * dropped: the rank sends it again after its RESUME. */
        char name[64];
        if (n < 0)
            gr_info("%s: its boot connection broke (%s); it may connect again",
                    conn_name(c, name, sizeof name), strerror(errno));
        else
            gr_info("%s closed its boot connection%s", conn_name(c, name, sizeof name),
                    c->rank >= 0 && c->srv->ranks[c->rank].fini ? " after FINI" : "");
        conn_close(c);
        return;
    }
}

static void conn_resume(struct rdv_conn *c)
{
    conn_parse(c);
    if (c->fd >= 0 && !conn_paused(c))
        conn_read(c);
    conn_update_interest(c);
}

/* Release every completed barrier; a released rank may enter the next. */
static void rdv_settle(struct gr_rdv *s)
{
    if (s->settling)
        return;
    s->settling = true;
    while (s->nranks > 0 && s->arrived == s->nranks) {
        s->arrived = 0;
        s->barriers_done++;
        for (uint32_t r = 0; r < s->nranks; r++) {
            struct rdv_conn *c = s->ranks[r].conn;
            s->ranks[r].in_barrier = false;
            if (c == NULL)
                continue;
            c->in_barrier = false;
            if (conn_send(c, GAS_BOOT_BARRIER_DONE, NULL, 0) < 0)
                conn_fail(c, "out of memory queueing BARRIER_DONE");
        }
        for (uint32_t r = 0; r < s->nranks; r++) {
            struct rdv_conn *c = s->ranks[r].conn;
            if (c != NULL)
                conn_resume(c);
        }
    }
    s->settling = false;
}

static void conn_on_event(struct gr_watch *w, uint32_t events)
{
    struct rdv_conn *c = (struct rdv_conn *)w;
    struct gr_rdv *s = c->srv;
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
        conn_flush(c);
    if (c->fd >= 0) {
        if (!conn_paused(c)) {
            conn_resume(c);
        } else if (events & (EPOLLERR | EPOLLHUP)) {
            /* Paused, and the peer is gone: stop the HUP from spinning the
             * loop; what it sent is read when the pause ends. */
            gr_loop_del(&c->w);
            c->detached = true;
        } else {
            conn_update_interest(c);
        }
    }
    rdv_settle(s);
}

/* ---- the server ---------------------------------------------------------- */

struct gr_rdv *gr_rdv_create(uint32_t nranks, uint64_t key, const struct gr_rdv_ops *ops)
{
    struct gr_rdv *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->nranks = nranks;
    s->key = key;
    s->ops = *ops;
    s->ranks = calloc(nranks, sizeof *s->ranks);
    s->kv = gr_kv_create();
    if (s->ranks == NULL || s->kv == NULL) {
        gr_rdv_destroy(s);
        return NULL;
    }
    return s;
}

void gr_rdv_destroy(struct gr_rdv *s)
{
    if (s == NULL)
        return;
    s->ops.closed = NULL;
    while (s->nconns > 0)
        conn_close(s->conns[s->nconns - 1]);
    free(s->conns);
    gr_kv_destroy(s->kv);
    free(s->ranks);
    free(s);
}

int gr_rdv_add_conn(struct gr_rdv *s, int fd, int expected_rank, const void *pre, size_t len)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    if (s->nconns == s->conns_cap) {
        size_t cap = s->conns_cap ? 2 * s->conns_cap : 64;
        struct rdv_conn **n = realloc(s->conns, cap * sizeof *n);
        if (n == NULL) {
            close(fd);
            return -ENOMEM;
        }
        s->conns = n;
        s->conns_cap = cap;
    }
    struct rdv_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        return -ENOMEM;
    }
    c->srv = s;
    c->fd = fd;
    c->expected = expected_rank;
    c->rank = -1;
    c->w.fd = -1;
    int rc = gr_loop_add(&c->w, fd, EPOLLIN, conn_on_event);
    if (rc < 0) {
        close(fd);
        free(c);
        return rc;
    }
    c->idx = s->nconns;
    s->conns[s->nconns++] = c;
    if (len > 0) {
        if (!conn_reserve_in(c, len)) {
            conn_fail(c, "out of memory buffering its HELLO");
            return 0;
        }
        memcpy(c->in, pre, len);
        c->in_len = len;
        conn_resume(c);
        rdv_settle(s);
    }
    return 0;
}

uint32_t gr_rdv_barrier_arrived(const struct gr_rdv *s)
{
    return s->arrived;
}

bool gr_rdv_in_barrier(const struct gr_rdv *s, uint32_t rank)
{
    return rank < s->nranks && s->ranks[rank].in_barrier;
}

bool gr_rdv_sent_fini(const struct gr_rdv *s, uint32_t rank)
{
    return rank < s->nranks && s->ranks[rank].fini;
}

bool gr_rdv_fini_failed(const struct gr_rdv *s, uint32_t rank)
{
    size_t len;
    return rank < s->nranks && gr_kv_get(s->kv, rank, GAS_BOOT_KEY_FINI_FAILED,
                                         strlen(GAS_BOOT_KEY_FINI_FAILED), &len) != NULL;
}

bool gr_rdv_helloed(const struct gr_rdv *s, uint32_t rank)
{
    return rank < s->nranks && s->ranks[rank].helloed;
}
