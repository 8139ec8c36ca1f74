/*
 * bench_ref.c - the references gas-bench measures in the same run, rank 0
 * alone, before the results:
 *  - memcpy bandwidth between two private page-aligned buffers, per size:
 *    bandwidth rows print their percentage of it;
 *  - the round trip of one 64-byte cache line bounced between rank 0 and a
 *    forked child process (not a rank) through a MAP_SHARED page, the floor
 *    of any shared-memory round trip: latency rows print their multiple of it;
 *  - fetch-add throughput on a private word (CPU atomics): rate rows print
 *    their percentage of it;
 *  - with GAS_TRANSPORT=udp (or --udp-ref), a raw UDP ping-pong and a raw
 *    sendmmsg stream between the ranks' udp addresses (bench_udp.c): latency
 *    rows then print their multiple of the UDP round trip and bandwidth rows
 *    their percentage of the stream.
 */
#include "gas-bench.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PINGPONG_STOP UINT64_MAX
#define PINGPONG_TIMEOUT_S 5.0

static uint64_t memcpy_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->dst, b->src, size);
        __asm__ __volatile__("" ::: "memory"); /* keep every copy */
    }
    return 0;
}

/* The child: answer every odd value with the next even one, until told to stop. */
static void pingpong_child(volatile uint64_t *line, pid_t parent, unsigned yield_mask)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    for (unsigned spins = 0;; spins++) {
        uint64_t v = __atomic_load_n(line, __ATOMIC_ACQUIRE);
        if (v == PINGPONG_STOP)
            _exit(0);
        if (v & 1) {
            __atomic_store_n(line, v + 1, __ATOMIC_RELEASE);
            spins = 0;
        } else if ((spins & yield_mask) == yield_mask) {
            sched_yield(); /* lets a single CPU make progress */
        }
    }
}

/*
 * Fork the child.  With two CPUs or more, rank 0 and the child are pinned to
 * two different ones (spinning on one CPU would measure the scheduler);
 * pingpong_stop() gives rank 0 its CPUs back.
 */
static void pingpong_setup(struct bench *b, size_t size)
{
    if (b->pp_line == NULL) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
            bench_die("mmap of the ping-pong page: %s", strerror(errno));
        b->pp_line = page; /* page-aligned, so the word owns its 64-byte line */
    }
    if (b->pp_child > 0)
        return;
    *b->pp_line = 0;
    b->pp_seq = 0;
    b->pp_cpu[0] = b->pp_cpu[1] = -1;
    cpu_set_t one;
    if (sched_getaffinity(0, sizeof b->pp_saved, &b->pp_saved) == 0 &&
        CPU_COUNT(&b->pp_saved) >= 2) {
        int here = sched_getcpu();
        b->pp_cpu[0] = here >= 0 && CPU_ISSET(here, &b->pp_saved) ? here : -1;
        for (int c = 0; c < CPU_SETSIZE && b->pp_cpu[1] < 0; c++) {
            if (!CPU_ISSET(c, &b->pp_saved) || c == b->pp_cpu[0])
                continue;
            if (b->pp_cpu[0] < 0)
                b->pp_cpu[0] = c;
            else
                b->pp_cpu[1] = c;
        }
        CPU_ZERO(&one);
        CPU_SET(b->pp_cpu[0], &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    b->pp_yield_mask = b->pp_cpu[1] >= 0 ? 4095 : 15;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork for the ping-pong reference: %s", strerror(errno));
    if (pid == 0) {
        if (b->pp_cpu[1] >= 0) {
            CPU_ZERO(&one);
            CPU_SET(b->pp_cpu[1], &one);
            sched_setaffinity(0, sizeof one, &one);
        }
        pingpong_child(b->pp_line, parent, b->pp_yield_mask);
    }
    b->pp_child = pid;
}

static void pingpong_stop(struct bench *b)
{
    if (b->pp_child <= 0)
        return;
    __atomic_store_n(b->pp_line, PINGPONG_STOP, __ATOMIC_RELEASE);
    waitpid(b->pp_child, NULL, 0);
    b->pp_child = 0;
    if (b->pp_cpu[0] >= 0)
        sched_setaffinity(0, sizeof b->pp_saved, &b->pp_saved);
}

static uint64_t pingpong_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t v = b->pp_seq + 1;
        double waiting_since = 0;
        __atomic_store_n(b->pp_line, v, __ATOMIC_RELEASE);
        for (unsigned spins = 1; __atomic_load_n(b->pp_line, __ATOMIC_ACQUIRE) != v + 1; spins++) {
            if ((spins & b->pp_yield_mask) == 0)
                sched_yield();
            if ((spins & 0xfffff) == 0) {
                if (waiting_since == 0)
                    waiting_since = bench_now_s();
                else if (bench_now_s() - waiting_since > PINGPONG_TIMEOUT_S)
                    bench_die("the ping-pong child stopped answering");
            }
        }
        b->pp_seq = v + 1;
    }
    return 0;
}

static void fill_src(struct bench *b, size_t size)
{
    bench_fill_pattern(b->src, size, b->seed);
}

static uint64_t local_fadd_batch(struct bench *b, size_t size, uint64_t iters)
{
    static uint64_t word;
    for (uint64_t i = 0; i < iters; i++)
        __atomic_fetch_add(&word, 1, __ATOMIC_SEQ_CST);
    return 0;
}

void bench_ref_stop(struct bench *b)
{
    pingpong_stop(b);
}

const struct mode bench_ref_modes[] = {
    { .name = "pingpong", .group = "ref", .kind = KIND_LAT, .fixed_size = 64, .reference = 1,
      .setup = pingpong_setup, .batch = pingpong_batch,
      .doc = "reference: 64-byte cache-line round trip with a forked child (MAP_SHARED)" },
    { .name = "memcpy", .group = "ref", .kind = KIND_BW, .sized = 1, .reference = 1,
      .setup = fill_src, .batch = memcpy_batch,
      .doc = "reference: memcpy between two private buffers of rank 0" },
    { .name = "local-fadd", .group = "ref", .kind = KIND_RATE, .fixed_size = 8, .reference = 1,
      .batch = local_fadd_batch, .doc = "reference: fetch-add on a private word" },
};
const size_t bench_nref_modes = sizeof bench_ref_modes / sizeof bench_ref_modes[0];
