/*
 * boot_client.c - a rank program for testing gasrun: it speaks the boot
 * protocol (runtime/boot_wire.h) directly, without libgas.
 *
 *   boot_client [MODE [ARG]] [marker...]
 *
 *   ok (default)  check the GASRUN_* environment, stdin and open fds; HELLO;
 *                 KV_PUT "k" = "v<rank>"; BARRIER; KV_GET every rank's "k";
 *                 then 100 rounds of put/BARRIER/get; FINI; exit 0
 *   abort         rank 1 sends ABORT (code 7); the others wait in a barrier
 *   badkey        rank 1 says HELLO with a wrong key, then sleeps
 *   exit N        rank 1 exits N after HELLO; the others wait in a barrier
 *   kill SIG      rank 1 raises SIG (a name like SEGV or a number)
 *   hang          HELLO, then sleep forever
 *   hang-noterm   as hang, with SIGTERM ignored (only SIGKILL ends it)
 *   spew          rank 0 writes 5 MB without a newline, then a line; then ok
 *   lines N       no protocol: write N numbered lines to stdout and N/4 to
 *                 stderr in odd-sized pieces, then an unterminated last line
 *   early-exit    rank 1 exits 0 after HELLO (no FINI); the others barrier
 *   fork-hang     rank 0 leaves sleeping descendants (one in its group, one
 *                 in a new session) and /dev/shm/gas-<jobid>-* entries (a
 *                 file; a directory with a file, a subdirectory and a link to
 *                 /dev/shm); then rank 1 exits 1
 *   fork-ok       as fork-hang, but every rank then finishes and exits 0
 *   shm END       rank 0 leaves the /dev/shm entries of fork-hang and prints
 *                 the job id; BARRIER; then END: ok (FINI, exit 0), crash
 *                 (rank 1 raises SIGSEGV, the others wait in a barrier) or
 *                 hang (every rank sleeps)
 *   stdin         rank 0 counts its stdin bytes; others check for /dev/null
 *   pipeline      requests sent without waiting for replies: BARRIER and
 *                 KV_GET back to back, a value of the largest size, 12000
 *                 KV_GETs in flight (replies back up in gasrun); exit 0
 *   barrier-exit  rank 1 sends BARRIER and FINI and exits 0 at once; the
 *                 others finish that barrier and exit 0
 *   proto WHAT    rank 1 breaks the protocol, then sleeps: WHAT is unknown
 *                 (a message of type 99), oversize (a 2 MiB header),
 *                 nohello (KV_PUT first), shorthello (a 12-byte HELLO)
 *   gate FILE     HELLO; BARRIER; rank 0 waits until FILE exists; then ok
 *   where         as ok, then prints "rank R local L/S" (its place on its host)
 *
 * The boot connection is GASRUN_BOOT_FD, or, for a rank that gasrun started
 * on another host, a TCP connection to GASRUN_BOOT_ADDR.  With
 * BOOT_CLIENT_ONE_HOST set, GASRUN_LOCAL_RANK/SIZE must equal RANK/NRANKS.
 *
 * Extra arguments are ignored (tests pass a unique marker to find leftover
 * processes with pgrep -f).
 */
#include "runtime/boot_tcp.h"
#include "runtime/boot_wire.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int rank = -1, nranks = -1, local_rank = -1, local_size = -1, boot_fd = -1;
static uint64_t job_key;
static const char *job_id, *boot_addr;

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "boot_client rank %d: %s\n", rank, buf);
    exit(1);
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static long env_long(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (v == NULL || *v == '\0')
        die("%s is not set", name);
    long x = strtol(v, &end, 10);
    if (*end != '\0')
        die("%s=%s is not a number", name, v);
    return x;
}

static bool is_lower_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
            return false;
    return true;
}

static void read_env(void)
{
    rank = (int)env_long("GASRUN_RANK");
    nranks = (int)env_long("GASRUN_NRANKS");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        die("bad GASRUN_RANK/GASRUN_NRANKS %d/%d", rank, nranks);
    local_rank = (int)env_long("GASRUN_LOCAL_RANK");
    local_size = (int)env_long("GASRUN_LOCAL_SIZE");
    if (local_size < 1 || local_size > nranks || local_rank < 0 || local_rank >= local_size)
        die("bad GASRUN_LOCAL_RANK/SIZE %d/%d", local_rank, local_size);
    /* Without hosts, this host has them all. */
    const char *one = getenv("BOOT_CLIENT_ONE_HOST");
    if (one != NULL && (local_rank != rank || local_size != nranks))
        die("GASRUN_LOCAL_RANK/SIZE differ from RANK/NRANKS on one host");
    const char *key = getenv("GASRUN_JOB_KEY");
    job_id = getenv("GASRUN_JOB_ID");
    if (key == NULL || !is_lower_hex(key, 16))
        die("GASRUN_JOB_KEY '%s' is not 16 lowercase hex digits", key ? key : "");
    if (job_id == NULL || !is_lower_hex(job_id, 8))
        die("GASRUN_JOB_ID '%s' is not 8 lowercase hex digits", job_id ? job_id : "");
    job_key = strtoull(key, NULL, 16);
    boot_addr = getenv("GASRUN_BOOT_ADDR");
    if (getenv("GASRUN_BOOT_FD") == NULL && boot_addr != NULL)
        return;     /* connect_boot() connects when the protocol starts */
    boot_fd = (int)env_long("GASRUN_BOOT_FD");
    struct stat st;
    if (fstat(boot_fd, &st) < 0 || !S_ISSOCK(st.st_mode))
        die("GASRUN_BOOT_FD %d is not a socket", boot_fd);
}

/* A rank on another host connects to gasrun (the protocol is the same). */
static void connect_boot(void)
{
    if (boot_fd >= 0)
        return;
    boot_fd = gas_boot_tcp_connect(boot_addr, 10000);
    if (boot_fd < 0)
        die("cannot connect to GASRUN_BOOT_ADDR %s: %s", boot_addr, strerror(-boot_fd));
}

/* Only 0, 1, 2 and the boot socket may be inherited. */
static void check_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        int fd = atoi(de->d_name);
        if (fd <= 2 || fd == boot_fd || fd == dirfd(d))
            continue;
        char path[64], target[256] = "";
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        die("fd %d (%s) leaked into the rank", fd, target);
    }
    closedir(d);
}

static bool stdin_is_devnull(void)
{
    struct stat a, b;
    return fstat(0, &a) == 0 && stat("/dev/null", &b) == 0 && S_ISCHR(a.st_mode) &&
           a.st_rdev == b.st_rdev;
}

/* ---- protocol ------------------------------------------------------------ */

static void send_msg(unsigned type, const void *p, size_t len)
{
    int rc = gas_boot_wire_send(boot_fd, type, p, len);
    if (rc < 0)
        die("send type %u: %s", type, strerror(-rc));
}

static void *recv_msg(unsigned want, unsigned alt, unsigned *type_p, size_t *len_p)
{
    unsigned type;
    void *p;
    size_t len;
    int rc = gas_boot_wire_recv(boot_fd, &type, &p, &len);
    if (rc < 0)
        die("waiting for message %u: %s", want, strerror(-rc));
    if (type != want && type != alt)
        die("got message type %u, wanted %u", type, want);
    if (type_p)
        *type_p = type;
    if (len_p)
        *len_p = len;
    return p;
}

static void hello_with(uint64_t key)
{
    unsigned char p[20];
    gas_boot_put_u32(p, GAS_BOOT_WIRE_VERSION);
    gas_boot_put_u64(p + 4, key);
    gas_boot_put_u32(p + 12, (uint32_t)rank);
    gas_boot_put_u32(p + 16, (uint32_t)getpid());
    send_msg(GAS_BOOT_HELLO, p, sizeof p);
}

static void hello(void)
{
    hello_with(job_key);
    size_t len;
    unsigned char *p = recv_msg(GAS_BOOT_HELLO_OK, GAS_BOOT_HELLO_OK, NULL, &len);
    if (len != 4 || gas_boot_get_u32(p) != (uint32_t)nranks)
        die("HELLO_OK does not carry nranks %d", nranks);
    free(p);
}

static void kv_put(const char *key, const char *val)
{
    size_t kl = strlen(key) + 1, vl = strlen(val);
    char *p = malloc(kl + vl);
    memcpy(p, key, kl);
    memcpy(p + kl, val, vl);
    send_msg(GAS_BOOT_KV_PUT, p, kl + vl);
    free(p);
}

/* The value (malloc'ed) or NULL when missing. */
static char *kv_get(int owner, const char *key)
{
    size_t kl = strlen(key) + 1;
    unsigned char *p = malloc(4 + kl);
    gas_boot_put_u32(p, (uint32_t)owner);
    memcpy(p + 4, key, kl);
    send_msg(GAS_BOOT_KV_GET, p, 4 + kl);
    free(p);
    unsigned type;
    char *v = recv_msg(GAS_BOOT_KV_VALUE, GAS_BOOT_KV_MISSING, &type, NULL);
    if (type == GAS_BOOT_KV_MISSING) {
        free(v);
        return NULL;
    }
    return v;
}

static void barrier(void)
{
    send_msg(GAS_BOOT_BARRIER, NULL, 0);
    free(recv_msg(GAS_BOOT_BARRIER_DONE, GAS_BOOT_BARRIER_DONE, NULL, NULL));
}

static void expect_value(int owner, const char *key, const char *want)
{
    char *v = kv_get(owner, key);
    if (want == NULL ? v != NULL : v == NULL || strcmp(v, want) != 0)
        die("KV_GET rank %d '%s': got '%s', want '%s'", owner, key, v ? v : "(missing)",
            want ? want : "(missing)");
    free(v);
}

/* ---- modes --------------------------------------------------------------- */

static void run_ok(void)
{
    char val[64];
    snprintf(val, sizeof val, "v%d", rank);
    kv_put("k", val);
    kv_put("r", "old");
    snprintf(val, sizeof val, "new%d", rank);
    kv_put("r", val);  /* replaces "old" */
    barrier();
    for (int r = 0; r < nranks; r++) {
        char want[64];
        snprintf(want, sizeof want, "v%d", r);
        expect_value(r, "k", want);
        snprintf(want, sizeof want, "new%d", r);
        expect_value(r, "r", want);
    }
    expect_value(0, "nokey", NULL);
    /* Barriers repeat, and each one fences the puts before it. */
    int peer = (rank + 1) % nranks;
    for (int i = 0; i < 100; i++) {
        char key[32];
        snprintf(key, sizeof key, "c%d", i);
        snprintf(val, sizeof val, "%d", i * nranks + rank);
        kv_put(key, val);
        barrier();
        snprintf(val, sizeof val, "%d", i * nranks + peer);
        expect_value(peer, key, val);
    }
    send_msg(GAS_BOOT_FINI, NULL, 0);
    printf("rank %d of %d ok\n", rank, nranks);
}

static void wait_in_barrier(void)
{
    send_msg(GAS_BOOT_BARRIER, NULL, 0);
    sleep_forever();
}

static int parse_signal(const char *s)
{
    static const struct { const char *name; int sig; } names[] = {
        { "KILL", SIGKILL }, { "SEGV", SIGSEGV }, { "TERM", SIGTERM }, { "ABRT", SIGABRT },
        { "INT", SIGINT }, { "BUS", SIGBUS }, { "FPE", SIGFPE }, { "USR1", SIGUSR1 },
    };
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0)
            return names[i].sig;
    int n = atoi(s);
    if (n <= 0)
        die("unknown signal '%s'", s);
    return n;
}

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("write: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static void spew(void)
{
    size_t total = 5u << 20, chunk = 1u << 16;
    char *buf = malloc(chunk);
    memset(buf, 'x', chunk);
    for (size_t done = 0; done < total; done += chunk)
        write_all(STDOUT_FILENO, buf, chunk);
    free(buf);
    write_all(STDOUT_FILENO, "\nspew done\n", 11);
}

/* Lines written in pieces that cut them at odd places. */
static void write_lines(int fd, int count, const char *stream)
{
    size_t cap = (size_t)count * 200 + 64, len = 0;
    char *buf = malloc(cap);
    unsigned seed = (unsigned)rank * 7919u + 17u;
    for (int i = 0; i < count; i++) {
        int pad = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 120;
        len += (size_t)sprintf(buf + len, "R%d %s line %d %.*s|end\n", rank, stream, i, pad,
                               "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij"
                               "klmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrs");
    }
    for (size_t off = 0; off < len; ) {
        size_t n = 1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 300;
        if (n > len - off)
            n = len - off;
        write_all(fd, buf + off, n);
        off += n;
    }
    free(buf);
}

static void make_file(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        die("create %s: %s", path, strerror(errno));
    close(fd);
}

static void make_dir(const char *path)
{
    if (mkdir(path, 0700) < 0)
        die("mkdir %s: %s", path, strerror(errno));
}

/* /dev/shm entries of the job for gasrun to sweep: a file, and a directory
 * holding a file, a subdirectory with a file, and a symbolic link to
 * /dev/shm itself (a sweep that followed it would remove other jobs' files). */
static void leave_shm(void)
{
    char path[160];
    snprintf(path, sizeof path, "/dev/shm/gas-%s-boot-client-test", job_id);
    make_file(path);
    snprintf(path, sizeof path, "/dev/shm/gas-%s-dir", job_id);
    make_dir(path);
    snprintf(path, sizeof path, "/dev/shm/gas-%s-dir/file", job_id);
    make_file(path);
    snprintf(path, sizeof path, "/dev/shm/gas-%s-dir/sub", job_id);
    make_dir(path);
    snprintf(path, sizeof path, "/dev/shm/gas-%s-dir/sub/file", job_id);
    make_file(path);
    snprintf(path, sizeof path, "/dev/shm/gas-%s-dir/shm-link", job_id);
    if (symlink("/dev/shm", path) < 0)
        die("symlink %s: %s", path, strerror(errno));
}

static void leave_descendants(void)
{
    /* One child that stays in the rank's process group. */
    if (fork() == 0)
        sleep_forever();
    /* One grandchild in a session of its own, orphaned at once; wait until
     * it is there. */
    int ready[2];
    if (pipe(ready) < 0)
        die("pipe: %s", strerror(errno));
    pid_t p = fork();
    if (p == 0) {
        if (fork() == 0) {
            setsid();
            close(ready[0]);
            write_all(ready[1], "x", 1);
            close(ready[1]);
            sleep_forever();
        }
        _exit(0);
    }
    close(ready[1]);
    char c;
    if (p < 0 || read(ready[0], &c, 1) != 1)
        die("the session grandchild did not start");
    close(ready[0]);
    waitpid(p, NULL, 0);
    leave_shm();
}

/* ---- requests in flight -------------------------------------------------- */

#define PIPELINE_GETS 12000

static int pipeline_peer;

static void *send_gets(void *arg)
{
    unsigned char p[4 + 3];
    gas_boot_put_u32(p, (uint32_t)pipeline_peer);
    memcpy(p + 4, "kb", 3);
    for (int i = 0; i < PIPELINE_GETS; i++)
        send_msg(GAS_BOOT_KV_GET, p, sizeof p);
    return NULL;
}

static void run_pipeline(void)
{
    int peer = pipeline_peer = (rank + 1) % nranks;
    char val[32];
    snprintf(val, sizeof val, "P%d", rank);
    kv_put("p", val);
    /* The KV_GET is answered after BARRIER_DONE and sees the peer's put. */
    unsigned char get[4 + 2];
    gas_boot_put_u32(get, (uint32_t)peer);
    memcpy(get + 4, "p", 2);
    send_msg(GAS_BOOT_BARRIER, NULL, 0);
    send_msg(GAS_BOOT_KV_GET, get, sizeof get);
    free(recv_msg(GAS_BOOT_BARRIER_DONE, GAS_BOOT_BARRIER_DONE, NULL, NULL));
    size_t len;
    char *v = recv_msg(GAS_BOOT_KV_VALUE, GAS_BOOT_KV_VALUE, NULL, &len);
    snprintf(val, sizeof val, "P%d", peer);
    if (strcmp(v, val) != 0)
        die("pipelined KV_GET after BARRIER: got '%s', want '%s'", v, val);
    free(v);

    /* The largest value a KV_PUT can carry. */
    size_t big = GAS_BOOT_MAX_PAYLOAD - 4;
    if (rank == 0) {
        char *p = malloc(4 + big);
        memcpy(p, "big", 4);
        for (size_t i = 0; i < big; i++)
            p[4 + i] = (char)('a' + i % 23);
        send_msg(GAS_BOOT_KV_PUT, p, 4 + big);
        free(p);
    }
    barrier();
    v = kv_get(0, "big");
    if (v == NULL)
        die("largest value missing");
    for (size_t i = 0; i < big; i++)
        if (v[i] != (char)('a' + i % 23))
            die("largest value corrupt at byte %zu", i);
    free(v);

    /* Thousands of KV_GETs in flight: more reply bytes than gasrun queues. */
    char kb[1024];
    memset(kb, 'k', sizeof kb - 1);
    kb[sizeof kb - 1] = '\0';
    kv_put("kb", kb);
    barrier();
    pthread_t t;
    if (pthread_create(&t, NULL, send_gets, NULL) != 0)
        die("pthread_create failed");
    usleep(300 * 1000);     /* let the replies back up */
    for (int i = 0; i < PIPELINE_GETS; i++) {
        v = recv_msg(GAS_BOOT_KV_VALUE, GAS_BOOT_KV_VALUE, NULL, &len);
        if (len != sizeof kb - 1)
            die("pipelined KV_GET %d: %zu bytes", i, len);
        free(v);
    }
    pthread_join(t, NULL);
    barrier();
    send_msg(GAS_BOOT_FINI, NULL, 0);
    printf("rank %d pipeline ok\n", rank);
}

static void break_protocol(const char *what)
{
    if (strcmp(what, "unknown") == 0) {
        hello();
        send_msg(99, "x", 1);
    } else if (strcmp(what, "oversize") == 0) {
        hello();
        unsigned char h[12];
        gas_boot_put_u32(h, GAS_BOOT_WIRE_MAGIC);
        h[4] = GAS_BOOT_KV_PUT;
        h[5] = h[6] = h[7] = 0;
        gas_boot_put_u32(h + 8, 2u << 20);
        write_all(boot_fd, (const char *)h, sizeof h);
    } else if (strcmp(what, "nohello") == 0) {
        kv_put("k", "v");
    } else if (strcmp(what, "shorthello") == 0) {
        unsigned char p[12] = { 1 };
        send_msg(GAS_BOOT_HELLO, p, sizeof p);
    } else {
        die("unknown proto breakage '%s'", what);
    }
    sleep_forever();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    const char *arg = argc > 2 ? argv[2] : "0";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "hang-noterm") == 0)
        signal(SIGTERM, SIG_IGN);
    read_env();

    if (strcmp(mode, "lines") == 0) {
        int n = atoi(arg);
        write_lines(STDOUT_FILENO, n, "out");
        write_lines(STDERR_FILENO, n / 4, "err");
        char tail[64];
        int len = snprintf(tail, sizeof tail, "R%d out tail-without-newline", rank);
        write_all(STDOUT_FILENO, tail, (size_t)len);
        return 0;
    }
    if (strcmp(mode, "stdin") == 0) {
        if (rank == 0) {
            char buf[4096];
            long total = 0;
            ssize_t n;
            while ((n = read(0, buf, sizeof buf)) > 0)
                total += n;
            printf("rank 0 read %ld bytes of stdin\n", total);
        } else if (!stdin_is_devnull()) {
            die("stdin is not /dev/null");
        }
        return 0;
    }

    connect_boot();
    if (strcmp(mode, "ok") == 0 || strcmp(mode, "spew") == 0 || strcmp(mode, "where") == 0) {
        check_fds();
        if (rank > 0 && !stdin_is_devnull())
            die("stdin is not /dev/null");
    }
    if (strcmp(mode, "proto") == 0 && rank == 1)
        break_protocol(arg);
    if (strcmp(mode, "badkey") == 0 && rank == 1) {
        hello_with(job_key ^ 0x5a5a);
        /* gasrun must close the connection without a reply and end the job. */
        unsigned type;
        void *p;
        size_t len;
        if (gas_boot_wire_recv(boot_fd, &type, &p, &len) == 0)
            die("got a reply (type %u) to a HELLO with a wrong key", type);
        sleep_forever();
    }
    hello();

    if (strcmp(mode, "ok") == 0) {
        run_ok();
    } else if (strcmp(mode, "spew") == 0) {
        if (rank == 0)
            spew();
        run_ok();
    } else if (strcmp(mode, "abort") == 0) {
        if (rank == 1) {
            const char msg[] = "boot_client test abort";
            unsigned char p[4 + sizeof msg];
            gas_boot_put_u32(p, 7);
            memcpy(p + 4, msg, sizeof msg - 1);
            send_msg(GAS_BOOT_ABORT, p, 4 + sizeof msg - 1);
            sleep_forever();
        }
        wait_in_barrier();
    } else if (strcmp(mode, "badkey") == 0 || strcmp(mode, "proto") == 0) {
        wait_in_barrier();
    } else if (strcmp(mode, "pipeline") == 0) {
        run_pipeline();
    } else if (strcmp(mode, "gate") == 0) {
        barrier();
        while (rank == 0 && access(arg, F_OK) != 0)
            usleep(20 * 1000);
        run_ok();
    } else if (strcmp(mode, "where") == 0) {
        run_ok();
        printf("rank %d local %d/%d\n", rank, local_rank, local_size);
    } else if (strcmp(mode, "barrier-exit") == 0) {
        if (rank == 1) {
            send_msg(GAS_BOOT_BARRIER, NULL, 0);
            send_msg(GAS_BOOT_FINI, NULL, 0);
            return 0;
        }
        barrier();
        send_msg(GAS_BOOT_FINI, NULL, 0);
    } else if (strcmp(mode, "exit") == 0) {
        if (rank == 1)
            exit(atoi(arg));
        wait_in_barrier();
    } else if (strcmp(mode, "kill") == 0) {
        if (rank == 1)
            raise(parse_signal(arg));
        wait_in_barrier();
    } else if (strcmp(mode, "hang") == 0) {
        sleep_forever();
    } else if (strcmp(mode, "hang-noterm") == 0) {
        sleep_forever();
    } else if (strcmp(mode, "early-exit") == 0) {
        if (rank == 1)
            exit(0);
        wait_in_barrier();
    } else if (strcmp(mode, "fork-hang") == 0 || strcmp(mode, "fork-ok") == 0) {
        if (rank == 0) {
            leave_descendants();
            printf("job id %s\n", job_id);
        }
        barrier();
        if (strcmp(mode, "fork-ok") == 0) {
            send_msg(GAS_BOOT_FINI, NULL, 0);
            return 0;
        }
        if (rank == 1)
            exit(1);
        sleep_forever();
    } else if (strcmp(mode, "shm") == 0) {
        if (rank == 0) {
            leave_shm();
            printf("job id %s\n", job_id);
        }
        barrier();
        if (strcmp(arg, "ok") == 0) {
            send_msg(GAS_BOOT_FINI, NULL, 0);
        } else if (strcmp(arg, "crash") == 0) {
            if (rank == 1)
                raise(SIGSEGV);
            wait_in_barrier();
        } else if (strcmp(arg, "hang") == 0) {
            sleep_forever();
        } else {
            die("unknown shm ending '%s'", arg);
        }
    } else {
        die("unknown mode '%s'", mode);
    }
    return 0;
}
