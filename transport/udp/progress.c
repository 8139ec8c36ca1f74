/*
 * progress.c - who serves the udp traffic when the application does not.
 *
 * GAS_PROGRESS=thread: one progress thread per rank receives, applies and
 * answers, and runs the timers.  Having served a request it polls the socket
 * for GAS_WAIT_SPIN more (the next request of a conversation usually comes
 * within a round trip).  Idle, it sleeps in epoll_wait; when a
 * timer is due within 100 us it polls the clock instead (waking a sleeping
 * thread costs more than that on a small VM).  After a second without
 * traffic it sleeps with no timeout, and a thread that sends after that
 * kicks it through an eventfd.  Application threads that wait in the
 * library also receive (when no one else is), which cuts a wake-up from a
 * round trip.
 *
 * An application thread that polls the socket from inside the library (a
 * wait's spin, or a completion wait asleep in the socket) *leases* it: for
 * GAS_UDP_LEASE after its last poll the progress thread does not watch the
 * socket, so an arriving datagram wakes one thread instead of two racing for
 * it (on a small VM the second wake-up costs more than the round trip).
 * The holder also runs the timers, so the progress thread is neither kicked
 * for them nor spins for a near one: every wake-up of it preempts a spinning
 * waiter where cores are few.  The progress thread takes the socket back
 * when the lease lapses, woken by a timerfd that the holder keeps armed at
 * the lease's end (re-armed about every half lease, so it never fires while
 * the holder polls), and at once when the waiter sleeps on the doorbell.
 * So a rank that leaves the library to compute is served again within the
 * lease (200 us where every thread has a core, 2 ms where not: there a
 * holder that the scheduler preempts for longer than the lease loses it,
 * and the hand-overs cost more wake-ups; the short lease grows to the long
 * one where holders are seen losing it to preemption: lease_watch).  One waiting thread at a
 * time sleeps in the socket (others on the doorbell), keeping the lease:
 * an acknowledgement or a peer's put wakes it directly rather than through
 * the progress thread and the doorbell, and it sleeps no later than the next
 * timer.  Completions by other threads poke it through an eventfd; when it
 * waits on segment words, which node-local writers also change, it joins
 * the doorbell as a socket sleeper, and they wake it with an empty datagram
 * (gas_rt_doorbell_join); a thread that reads such a datagram off the
 * socket instead passes it on through the eventfd (rx.c).
 *
 * GAS_PROGRESS=poll: no thread.  Only library calls make progress (the hook
 * that every wait drives).  One waiting thread, the leader, sleeps in the
 * socket (gas_rt_wait_set_sleeper), so a datagram wakes it, and serves it for
 * the rest of its wait; other waiting threads sleep on the doorbell, which it
 * rings for what it receives and when its wait ends (poll_sleep).
 *
 * Another transport's event source (ctrl.h; rdma's receive completions) is
 * served here too: its descriptor is in the progress thread's epoll set and
 * its function runs every time the thread goes round, told whether an
 * application thread holds the lease (then that thread polls, and the source
 * need not wake us); in poll mode a waiter runs it before it sleeps in the
 * socket, the descriptor beside it.
 */
#include "transport/udp/udp.h"
#include "transport/udp/ctrl.h"
#include "alloc/segment.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 100000ull          /* a deadline this close is polled, not slept for */
#define TICK_NS 20000000ull        /* recently active: wake at least this often */
#define LINGER_NS 1000000000ull    /* idle this long: sleep until kicked */
#define IDLE_POLL_NS 50000ull      /* poll mode, no udp peer yet: look this often */
#define EXT_SLICE_NS 1000000ull    /* with an event source: longest sleep in the socket */

/* Whether the progress thread's epoll set watches the socket (lease_lock held). */
static void pt_watch(struct gas_udp_state *g, int on)
{
    struct epoll_event ev = {.events = on ? EPOLLIN : 0, .data.fd = g->fd};
    epoll_ctl(g->epfd, EPOLL_CTL_MOD, g->fd, &ev);
    atomic_store(&g->pt_sock_on, on);
}

/* The lease's length now: GAS_UDP_LEASE, or the automatic one, which may grow. */
static uint64_t lease_len(struct gas_udp_state *g)
{
    return atomic_load_explicit(&g->lease_ns, memory_order_relaxed);
}

/* This thread: its previous poll of the socket, and its count of involuntary
 * context switches (getrusage, 0.4 us) when it last re-armed the lease timer. */
static _Thread_local uint64_t my_poll_ns, my_ivcsw, my_ivcsw_ns;

static uint64_t thread_ivcsw(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/*
 * Where threads outnumber the CPUs that actually run them (other "hosts" in
 * network namespaces or containers on the same machine, other jobs: what the
 * automatic rule in init.c cannot see), the scheduler preempts a lease
 * holder for longer than a short lease.  The progress thread then takes the
 * socket over, and the holder takes it back when it runs again: two wake-ups
 * and a race for the socket on every preemption.  A thread that polls again
 * more than a lease after its previous poll, finds the lease lapsed, and was
 * switched out involuntarily since it last re-armed the timer (shortly
 * before that poll) lost the lease to the scheduler, not to the application
 * computing or sleeping.  Two of those within a second make the automatic
 * lease grow to its crowded length for the rest of the run (said once, at
 * info level): where the progress thread and the holder then take turns
 * with the socket, each also spinning, for a CPU that a third thread needs,
 * a round trip took 20-57 us with the 200 us lease and 17-25 us with 2 ms
 * (two network namespaces on a 2-CPU VM; docs/udp.md).
 */
static void lease_watch(struct gas_udp_state *g, uint64_t now)
{
    uint64_t prev = my_poll_ns, lease = lease_len(g);
    my_poll_ns = now;
    if (prev == 0 || now - prev < lease || now < atomic_load(&g->lease_until) ||
        lease >= GAS_UDP_LEASE_CROWDED || my_ivcsw_ns == 0 || my_ivcsw_ns + 2 * lease < prev)
        return;
    uint64_t iv = thread_ivcsw();
    int preempted = iv > my_ivcsw;
    my_ivcsw = iv;
    my_ivcsw_ns = now;
    if (!preempted)
        return;
    uint64_t since = atomic_load(&g->preempt_since);
    if (now - since > 1000000000u && atomic_compare_exchange_strong(&g->preempt_since, &since, now))
        atomic_store(&g->preempt_n, 0);
    if (atomic_fetch_add(&g->preempt_n, 1) + 1 < 2)
        return;
    uint64_t old = lease;
    if (atomic_compare_exchange_strong(&g->lease_ns, &old, GAS_UDP_LEASE_CROWDED))
        gas_log_info("udp", "lease holders were preempted for longer than the %.0f us lease twice "
                            "within a second (more runnable threads than CPUs): the lease is now "
                            "%.0f ms (GAS_UDP_LEASE sets it)",
                     (double)lease / 1e3, GAS_UDP_LEASE_CROWDED / 1e6);
}

/*
 * Keep the lease timer (in the progress thread's epoll set) firing no later
 * than `until`, the lease's end, so that the progress thread wakes when the
 * lease may have lapsed, and not before while the holder keeps polling.  It
 * is re-armed (a system call in the calling thread, where a timeout of the
 * progress thread's sleep would be a wake-up of it, preempting a spinning
 * thread where cores are few) only when it would fire after `until`, or
 * within an eighth of a lease: so a holder that polls all along re-arms it
 * about once a lease and the progress thread never wakes.  (Once a lease,
 * not on every poll: re-arming costs ~8 us on a VM, where programming the
 * timer hardware traps to the hypervisor.)
 */
static int lease_arm(struct gas_udp_state *g, uint64_t until)
{
    uint64_t armed = atomic_load(&g->lease_armed);
    uint64_t lease = lease_len(g);
    if (armed != 0 && armed <= until && armed + lease - lease / 8 >= until)
        return 0;
    if (!atomic_compare_exchange_strong(&g->lease_armed, &armed, until))
        return 0; /* another thread re-armed it meanwhile */
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(until / 1000000000u),
                                          .tv_nsec = (long)(until % 1000000000u)}};
    timerfd_settime(g->lease_tfd, TFD_TIMER_ABSTIME, &its, NULL);
    return 1;
}

/* lease_arm for the lease holder: when it re-arms, it also takes the
 * baseline lease_watch compares against (the progress thread does not). */
static void holder_arm(struct gas_udp_state *g, uint64_t until)
{
    if (lease_arm(g, until) && g->cfg.lease_auto && lease_len(g) < GAS_UDP_LEASE_CROWDED) {
        my_ivcsw = thread_ivcsw();
        my_ivcsw_ns = gas_rt_now_ns();
    }
}

/* The progress thread stops watching the socket (a thread holds the lease). */
static void stand_aside(struct gas_udp_state *g)
{
    if (atomic_load_explicit(&g->pt_sock_on, memory_order_relaxed)) {
        pthread_mutex_lock(&g->lease_lock);
        if (atomic_load(&g->pt_sock_on))
            pt_watch(g, 0);
        pthread_mutex_unlock(&g->lease_lock);
    }
}

/*
 * An application thread polls the socket until `until`: the progress thread
 * stands aside.  It must still wake when the lease lapses (the application
 * thread may leave the library and compute): the lease timer wakes it.
 */
static void lease_take(struct gas_udp_state *g, uint64_t until)
{
    if (atomic_load_explicit(&g->lease_until, memory_order_relaxed) < until)
        atomic_store(&g->lease_until, until);
    holder_arm(g, atomic_load(&g->lease_until));
    stand_aside(g);
}

/*
 * Whether an application thread holds the lease: then it runs the timers
 * (gas_udp_progress, as it polls; asleep in the socket, it wakes by the next
 * timer), and the progress thread need not wake for them before the lease
 * lapses.
 */
static int holder_runs_timers(struct gas_udp_state *g, uint64_t now)
{
    return now < atomic_load(&g->lease_until);
}

void gas_udp_poke_waiter(void)
{
    uint64_t one = 1;
    ssize_t w = write(gas_udp_g.done_evfd, &one, sizeof one);
    (void)w;
}

/* Wake the progress thread if it sleeps past t (it is awake when
 * pt_wake_ns is 0), so that it sleeps again until t. */
static void kick_if_past(struct gas_udp_state *g, uint64_t t)
{
    uint64_t wake = g->pt_started ? atomic_load(&g->pt_wake_ns) : 0;
    if (wake != 0 && wake > t + SPIN_NS)
        gas_udp_kick();
}

/* The timers stop being run by a polling lease holder: if the progress
 * thread sleeps past the next one, wake it.  (Each side stores, then loads
 * the other's word, so a timer set meanwhile is seen by one of them.) */
static void timers_handed_back(struct gas_udp_state *g)
{
    kick_if_past(g, atomic_load(&g->next_timer_ns));
}

/* The socket goes back to the progress thread (lease lapsed or given up). */
static void lease_end(struct gas_udp_state *g, int force)
{
    if (atomic_load_explicit(&g->pt_sock_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&g->lease_lock);
    int given = 0;
    if (!atomic_load(&g->pt_sock_on) && (force || gas_rt_now_ns() >= atomic_load(&g->lease_until))) {
        if (force)
            atomic_store(&g->lease_until, 0);
        pt_watch(g, 1);
        given = force;
    }
    pthread_mutex_unlock(&g->lease_lock);
    if (given)
        timers_handed_back(g);
}

/* Lower *word to t. */
static void lower_to(_Atomic uint64_t *word, uint64_t t)
{
    uint64_t cur = atomic_load(word);
    while (t < cur && !atomic_compare_exchange_weak(word, &cur, t))
        ;
}

/*
 * A deadline at t: whoever runs the timers must not sleep past it.  Under the
 * lease that is the holder: it polls, or sleeps in the socket until
 * sleeper_until (then poke it; it stores waiter_asleep, then loads
 * next_timer_ns, we the reverse, so one of us sees the other).  Otherwise
 * the progress thread.  Not kicking it under the lease matters where cores
 * are few (each wake-up of it preempts a spinning waiter), except for an
 * urgent deadline, which holds data back: a holder that left the library
 * must not sit on it until the lease lapses, so the progress thread keeps to
 * those (next_urgent_ns) as well.
 */
static void timer_at(uint64_t t, int urgent)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (urgent)
        lower_to(&g->next_urgent_ns, t);
    lower_to(&g->next_timer_ns, t);
    if (atomic_load(&g->waiter_asleep) && atomic_load(&g->sleeper_until) > t + SPIN_NS)
        gas_udp_poke_waiter();
    if (urgent || !holder_runs_timers(g, gas_rt_now_ns()))
        kick_if_past(g, t);
}

void gas_udp_timer_at(uint64_t t)
{
    timer_at(t, 0);
}

void gas_udp_timer_at_urgent(uint64_t t)
{
    timer_at(t, 1);
}

void gas_udp_kick(void)
{
    uint64_t one = 1;
    ssize_t w = write(gas_udp_g.evfd, &one, sizeof one);
    (void)w;
}

/*
 * The timers run long after their deadline (by over a quarter of
 * GAS_UDP_PEER_TIMEOUT): this rank was not running (stopped with SIGSTOP,
 * starved, or computing in poll mode).  Its peers' silence over that time
 * says nothing of them, so the peer timeout of a channel that waits for
 * them starts again now instead of declaring them dead at once: a resumed
 * rank first hears whether it was itself declared dead (a DEAD notice).
 */
static void stall_forgive(struct gas_udp_chan *ch, uint64_t now)
{
    if (ch->una != ch->next_seq || atomic_load(&ch->cacked) != ch->next_seq)
        ch->last_progress_ns = now;
}

int gas_udp_timers_run(uint64_t now)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint64_t due = atomic_load(&g->next_timer_ns);
    if (now < due || pthread_mutex_trylock(&g->timer_lock) != 0)
        return 0;
    int stalled = due != GAS_UDP_NEVER && now - due > g->cfg.peer_timeout / 4;
    atomic_store(&g->next_timer_ns, GAS_UDP_NEVER);
    atomic_store(&g->next_urgent_ns, GAS_UDP_NEVER);
    uint64_t next = gas_udp_sock_flush_delayed(now), urgent = GAS_UDP_NEVER;
    int blocked = atomic_exchange(&g->total_blocked, 0);
    uint32_t n = atomic_load_explicit(&g->nactive, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct gas_udp_chan *ch = g->active[i];
        pthread_mutex_lock(&ch->lock);
        if (stalled)
            stall_forgive(ch, now);
        uint64_t u, t = gas_udp_chan_timers(ch, now, &u);
        if (blocked)
            gas_udp_chan_push(ch, now, 1);
        pthread_mutex_unlock(&ch->lock);
        next = t < next ? t : next;
        urgent = u < urgent ? u : urgent;
    }
    pthread_mutex_unlock(&g->timer_lock);
    gas_udp_announce();   /* peers declared dead just now: tell the other ranks */
    lower_to(&g->next_urgent_ns, urgent);
    lower_to(&g->next_timer_ns, next);
    return 1;
}

int gas_udp_progress(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint64_t now = 0;
    if (atomic_load_explicit(&g->nactive, memory_order_relaxed) == 0) {
        /* No udp peer yet (all on shm, say): the progress thread listens, or,
         * in poll mode, look now and then so first contact is served. */
        if (!g->cfg.poll_mode)
            return 0;
        now = gas_rt_now_ns();
        if (now - atomic_load_explicit(&g->last_idle_poll_ns, memory_order_relaxed) < IDLE_POLL_NS)
            return 0;
        atomic_store_explicit(&g->last_idle_poll_ns, now, memory_order_relaxed);
    }
    int n = 0;
    if (!g->cfg.poll_mode) {
        if (now == 0)
            now = gas_rt_now_ns();
        if (g->cfg.lease_auto)
            lease_watch(g, now);
        lease_take(g, now + lease_len(g));
    }
    if (atomic_load_explicit(&g->corked, memory_order_relaxed) && atomic_exchange(&g->corked, 0)) {
        /* Someone waits: send what was corked. */
        uint32_t na = atomic_load_explicit(&g->nactive, memory_order_acquire);
        uint64_t t = gas_rt_now_ns();
        for (uint32_t i = 0; i < na; i++) {
            struct gas_udp_chan *ch = g->active[i];
            pthread_mutex_lock(&ch->lock);
            if (gas_udp_chan_has_open(ch))
                gas_udp_chan_push(ch, t, 1);
            pthread_mutex_unlock(&ch->lock);
        }
    }
    if (pthread_mutex_trylock(&g->rx_lock) == 0) {
        n = gas_udp_rx_batch();
        pthread_mutex_unlock(&g->rx_lock);
    }
    return n + gas_udp_timers_run(gas_rt_now_ns());
}

/*
 * Sleep in epoll instance ep until an event or `wake`; drain eventfd evfd
 * and timerfd tfd (-1: none) if they fired.  Returns 1 when tfd fired.
 */
static int wait_events(int ep, int evfd, int tfd, uint64_t now, uint64_t wake)
{
    struct epoll_event ev[4];
    struct timespec ts, *tsp = NULL;
    if (wake != GAS_UDP_NEVER) {
        uint64_t d = wake > now ? wake - now : 0;
        ts = (struct timespec){.tv_sec = (time_t)(d / 1000000000u), .tv_nsec = (long)(d % 1000000000u)};
        tsp = &ts;
    }
    int n = epoll_pwait2(ep, ev, 4, tsp, NULL), fired = 0;
    for (int i = 0; i < n; i++) {
        int fd = ev[i].data.fd;
        if (fd >= 0 && (fd == evfd || fd == tfd)) {
            uint64_t v;
            ssize_t r = read(fd, &v, sizeof v);
            (void)r;
            fired |= fd == tfd;
        }
    }
    return fired;
}

static void *progress_main(void *arg)
{
    struct gas_udp_state *g = &gas_udp_g;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the application's */
    uint64_t busy = gas_rt_now_ns(), served = 0;
    while (!atomic_load(&g->stop)) {
        int n = 0, rx = 0;
        uint64_t now = gas_rt_now_ns(), lease = atomic_load(&g->lease_until);
        if (now >= lease) {
            lease_end(g, 0);
            pthread_mutex_lock(&g->rx_lock);
            n = rx = gas_udp_rx_batch();
            pthread_mutex_unlock(&g->rx_lock);
            now = gas_rt_now_ns();
        } else {
            (void)lease_arm(g, lease); /* renewed: wake at its new end */
        }
        n += gas_udp_timers_run(now);
        /* a lease holder asleep in the socket polls nothing else */
        n += gas_udp_event_run(now < atomic_load(&g->lease_until) && !atomic_load(&g->waiter_asleep));
        if (rx)
            served = now;
        if (n) {
            busy = now;
            continue;
        }
        int held = holder_runs_timers(g, now);
        /* a lease holder runs them; but for those data waits on, wake when the lease lapses */
        uint64_t next = atomic_load(held ? &g->next_urgent_ns : &g->next_timer_ns);
        if (next != GAS_UDP_NEVER && next <= now + SPIN_NS) {
            gas_rt_cpu_relax();
            continue;
        }
        /* Having served a request, keep polling the socket for as long as a
         * wait spins (GAS_WAIT_SPIN; never on an oversubscribed node): the
         * initiator's next request usually follows within a round trip, and
         * waking this thread costs more than that on a small VM. */
        if (now - served < gas_rt_wait_spin_ns() && now >= atomic_load(&g->lease_until)) {
            gas_rt_cpu_relax();
            continue;
        }
        uint64_t act = atomic_load_explicit(&g->last_activity_ns, memory_order_relaxed);
        if (act > busy)
            busy = act;
        /* The lease's end is not a deadline here: the lease timer fires
         * then (lease_arm), so the socket is taken back after a sleep, never
         * a spin, and not at all while the holder keeps polling. */
        uint64_t wake = next != GAS_UDP_NEVER ? next
                        : now - busy < LINGER_NS ? now + TICK_NS
                                                 : GAS_UDP_NEVER;
        atomic_store(&g->pt_wake_ns, wake);
        /* Recheck after publishing the wake-up time: a sender may have set an
         * earlier timer meanwhile (they kick us only when they see us
         * sleeping past their deadline). */
        if (atomic_load(held ? &g->next_urgent_ns : &g->next_timer_ns) < wake) {
            atomic_store(&g->pt_wake_ns, 0);
            continue;
        }
        if (wait_events(g->epfd, g->evfd, g->lease_tfd, now, wake))
            atomic_store(&g->lease_armed, 0); /* it fired: no longer armed */
        atomic_store(&g->pt_wake_ns, 0);
    }
    return arg;
}

gas_status_t gas_udp_progress_start(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    int err = pthread_create(&g->pt, NULL, progress_main, NULL);
    if (err != 0) {
        gas_log_error("udp", "cannot start the progress thread: %s", strerror(err));
        return GAS_ERR_IO;
    }
    g->pt_started = 1;
    return GAS_OK;
}

void gas_udp_progress_stop(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (!g->pt_started)
        return;
    atomic_store(&g->stop, 1);
    gas_udp_kick();
    pthread_join(g->pt, NULL);
    g->pt_started = 0;
}

/*
 * The one waiter asleep in the socket, in epoll set ep: it says so (a
 * completion made by another thread, a timer set meanwhile or a wake-up
 * datagram another thread read then pokes done_evfd), sleeps no later than
 * `until` or the next timer (thread mode: holding the lease until a lease
 * after that, with `lease`), and joins the doorbell for a condition on
 * segment words, so that node-local writers wake it with a datagram.
 * Whether it slept (cond did not hold).
 */
static int socket_sleep(struct gas_udp_state *g, int ep, int lease, gas_rt_cond_fn cond, void *arg,
                        const void *watch, uint64_t now, uint64_t until)
{
    atomic_store(&g->sleeper_until, until);
    atomic_store(&g->waiter_asleep, 1);
    uint64_t next = atomic_load(&g->next_timer_ns);
    if (next < until) {
        until = next > now ? next : now;
        atomic_store(&g->sleeper_until, until);
    }
    if (lease)
        lease_take(g, until + lease_len(g));
    if (watch != NULL)
        gas_rt_doorbell_join(watch);
    int slept = !cond(arg);
    if (slept)
        wait_events(ep, g->done_evfd, -1, now, until);
    if (watch != NULL)
        gas_rt_doorbell_leave(); /* before applying what woke us: no nudge to ourselves */
    atomic_store(&g->waiter_asleep, 0); /* awake: completions need not poke us */
    return slept;
}

/* Poll mode: identifies this thread as poll_leader. */
static _Thread_local char poll_self;

struct follow {
    gas_rt_cond_fn cond;
    void *arg;
};

/* A follower stops sleeping when its condition holds or no thread serves
 * the socket any more. */
static int follow_cond(void *a)
{
    struct follow *f = a;
    return f->cond(f->arg) || atomic_load(&gas_udp_g.poll_leader) == NULL;
}

/*
 * Poll mode, where only waiting threads serve the socket.  One of them, the
 * leader, serves it for the rest of its wait: it sleeps in the socket, at
 * most until the next timer, and handles what arrives (which rings the
 * doorbell for the others' words and completions).  Every other waiting
 * thread sleeps on the doorbell until its condition holds or the leader's
 * wait ends (gas_udp_wait_done rings it then, and one of them leads next).
 * Only one thread sleeps in the socket, so a wake-up meant for it cannot be
 * read by another sleeper instead: a thread that reads an empty datagram
 * passes it on through done_evfd (rx.c).  Before, every waiting thread
 * slept in the socket, and a nudge one of them read off the socket left
 * another asleep although its word had changed.
 */
static int poll_sleep(struct gas_udp_state *g, gas_rt_cond_fn cond, void *arg, const void *watch,
                      uint64_t now, uint64_t until)
{
    const void *cur = atomic_load(&g->poll_leader);
    if (cur != &poll_self &&
        (cur != NULL || !atomic_compare_exchange_strong(&g->poll_leader, &cur, &poll_self))) {
        struct follow f = {cond, arg};
        gas_rt_doorbell_sleep(follow_cond, &f, watch, until - now);
        return 1;
    }
    if (gas_udp_event_run(0) == 0)
        socket_sleep(g, g->epfd, 0, cond, arg, watch, now, until);
    return 1;
}

void gas_udp_wait_done(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (atomic_load(&g->poll_leader) != &poll_self)
        return;
    atomic_store(&g->poll_leader, NULL);
    /* Followers count themselves on the doorbell before they look at
     * poll_leader: one that we do not see here sees it empty. */
    gas_rt_doorbell_t *db = &gas_al_seg_hdr(g->env.seg_base)->doorbell;
    if (atomic_load(&db->sleepers) != 0)
        gas_rt_doorbell_wake(db);
}

int gas_udp_sleep(gas_rt_cond_fn cond, void *arg, const void *watch, uint64_t max_ns)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (cond(arg))
        return 1;
    uint64_t now = gas_rt_now_ns();
    uint64_t slice = max_ns < g->cfg.sleep_slice ? max_ns : g->cfg.sleep_slice;
    /* rdma's send CQ raises no event: its completions are polled this often. */
    if (slice > EXT_SLICE_NS && atomic_load_explicit(&g->ext_fn, memory_order_relaxed) != NULL)
        slice = EXT_SLICE_NS;
    uint64_t until = now + slice;
    if (g->cfg.poll_mode)
        return poll_sleep(g, cond, arg, watch, now, until);
    /* The other transport's source stops being polled by this thread: arm
     * it, so that the progress thread wakes for it. */
    if (gas_udp_event_run(0) && cond(arg))
        return 1;
    /* No udp peer contacted yet (e.g. every peer on this node): nothing can
     * arrive on the socket for this waiter, and the futex doorbell is the
     * cheaper wake-up for shm writers. */
    if (atomic_load_explicit(&g->nactive, memory_order_acquire) == 0)
        return 0;
    /* One waiter sleeps in the socket; every other one sleeps on the
     * doorbell (which the progress thread rings), and gives the socket back
     * to the progress thread unless the first one keeps it. */
    if (pthread_mutex_trylock(&g->sleep_lock) != 0) {
        if (!atomic_load(&g->waiter_asleep))
            lease_end(g, 1);
        return 0;
    }
    /* The waiter keeps the socket while it sleeps in it, handles what woke
     * it, and runs the timers. */
    int slept = socket_sleep(g, g->wait_ep, 1, cond, arg, watch, now, until);
    if (slept) {
        if (pthread_mutex_trylock(&g->rx_lock) == 0) {
            while (gas_udp_rx_batch() == GAS_UDP_BATCH)
                ;
            pthread_mutex_unlock(&g->rx_lock);
        }
        /* The lease ends a lease after this poll, not after the sleep we
         * asked for; another waiter may have handed the socket back meanwhile. */
        uint64_t until2 = gas_rt_now_ns() + lease_len(g);
        atomic_store(&g->lease_until, until2);
        holder_arm(g, until2);
        stand_aside(g);
    }
    pthread_mutex_unlock(&g->sleep_lock);
    return 1;
}
