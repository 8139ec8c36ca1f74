/*
 * fault.c - the SIGBUS report for segment pages that cannot be backed (see
 * fault.h).  The handler only reads the table of mappings and preformatted
 * text, formats numbers itself and calls write(2): async-signal-safe.
 */
#include "fault.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mapping {
    _Atomic(const char *) base;   /* NULL: free slot */
    _Atomic uint64_t size;
    _Atomic int owner;
};

static struct mapping *maps;
static int nmaps;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int my_rank = -1;
static char tail[900];           /* after the numbers: the limits and the advice */
static struct sigaction previous;
static volatile sig_atomic_t installed;

/* Append decimal v to buf at *n. */
static void put_u64(char *buf, size_t cap, size_t *n, uint64_t v)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k > 0 && *n < cap)
        buf[(*n)++] = tmp[--k];
}

static void put_str(char *buf, size_t cap, size_t *n, const char *s)
{
    while (*s && *n < cap)
        buf[(*n)++] = *s++;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction prev = previous;
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
        prev.sa_sigaction(sig, si, uc);
        return;
    }
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL &&
        prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
        return;
    }
    /* Default action: restore it; returning re-executes the access, which kills us. */
    signal(sig, SIG_DFL);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    const char *addr = si ? (const char *)si->si_addr : NULL;
    for (int i = 0; addr && i < nmaps; i++) {
        const char *b = maps[i].base;
        uint64_t sz = maps[i].size;
        if (b == NULL || addr < b || (uint64_t)(addr - b) >= sz)
            continue;
        char msg[1200];
        size_t n = 0;
        put_str(msg, sizeof msg, &n, "[gas r");
        put_u64(msg, sizeof msg, &n, (uint64_t)my_rank);
        put_str(msg, sizeof msg, &n, "] FATAL segment: SIGBUS: no memory could back the page at offset ");
        put_u64(msg, sizeof msg, &n, (uint64_t)(addr - b));
        put_str(msg, sizeof msg, &n, " of rank ");
        put_u64(msg, sizeof msg, &n, (uint64_t)maps[i].owner);
        put_str(msg, sizeof msg, &n, "'s segment");
        put_str(msg, sizeof msg, &n, tail);
        ssize_t w = write(STDERR_FILENO, msg, n);
        (void)w;
        break;
    }
    chain(sig, si, uc);
}

int gas_al_fault_setup(int rank, const char *limits, int capacity)
{
    pthread_mutex_lock(&maps_lock);
    my_rank = rank;
    snprintf(tail, sizeof tail,
             ". Backing here is limited by %s. Touch less memory or raise that limit; with "
             "GAS_PREFAULT=y, gas_malloc and gas_alloc back their memory when called and "
             "return GAS_ERR_NOMEM instead.\n",
             limits);
    int rc = 0;
    if (maps == NULL) {
        maps = calloc((size_t)capacity, sizeof *maps);
        nmaps = maps ? capacity : 0;
        rc = maps ? 0 : -1;
    }
    pthread_mutex_unlock(&maps_lock);
    if (rc == 0 && !installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &previous) == 0)
            installed = 1;
    }
    return rc;
}

void gas_al_fault_teardown(void)
{
    if (installed) {
        struct sigaction cur;
        /* Put the previous handler back only if nobody replaced ours since. */
        if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_sigbus)
            sigaction(SIGBUS, &previous, NULL);
        installed = 0;
    }
    pthread_mutex_lock(&maps_lock);
    free(maps);
    maps = NULL;
    nmaps = 0;
    pthread_mutex_unlock(&maps_lock);
}

void gas_al_fault_track(const char *base, uint64_t size, int owner)
{
    pthread_mutex_lock(&maps_lock);
    for (int i = 0; i < nmaps; i++) {
        if (maps[i].base == NULL) {
            maps[i].size = size;
            maps[i].owner = owner;
            maps[i].base = base;
            break;
        }
    }
    pthread_mutex_unlock(&maps_lock);
}

void gas_al_fault_untrack(const char *base)
{
    pthread_mutex_lock(&maps_lock);
    for (int i = 0; i < nmaps; i++)
        if (maps[i].base == base)
            maps[i].base = NULL;
    pthread_mutex_unlock(&maps_lock);
}

uint64_t gas_al_fault_peer_bytes(int self)
{
    uint64_t sum = 0;
    pthread_mutex_lock(&maps_lock);
    for (int i = 0; i < nmaps; i++)
        if (maps[i].base != NULL && maps[i].owner != self)
            sum += maps[i].size;
    pthread_mutex_unlock(&maps_lock);
    return sum;
}
