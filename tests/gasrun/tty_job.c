/*
 * tty_job - play an interactive shell's job control on a fresh terminal.
 *
 *   tty_job GASRUN [ARGS...]
 *
 * Opens a pseudo-terminal, makes it the controlling terminal of a new session
 * and starts the command in a process group of its own in the background (as
 * `cmd &` does), waits 1 s, brings it to the foreground (as `fg` does:
 * tcsetpgrp, then SIGCONT to its group), and types "hello".  It passes (exit
 * 0) when the job prints "got hello" and exits 0 within 10 s of that; else it
 * prints what happened, kills the job's group and exits 1.  The job's ranks
 * are in groups of their own (gasrun's); gasrun's teardown kills them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The session leader on the terminal: start, background, fg, wait. */
static int shell(char **cmd)
{
    signal(SIGTTOU, SIG_IGN); /* tcsetpgrp from here */
    pid_t job = fork();
    if (job < 0)
        return 1;
    if (job == 0) {
        setpgid(0, 0);
        signal(SIGTTOU, SIG_DFL);
        execvp(cmd[0], cmd);
        perror("tty_job: exec");
        _exit(127);
    }
    setpgid(job, job);
    sleep(1);
    if (tcsetpgrp(STDIN_FILENO, job) < 0) {
        perror("tty_job: tcsetpgrp");
        return 1;
    }
    kill(-job, SIGCONT);
    double t0 = now();
    int st;
    for (;;) {
        pid_t r = waitpid(job, &st, WNOHANG | WUNTRACED);
        if (r == job)
            break;
        if (now() - t0 > 10) {
            fprintf(stderr, "tty_job: the job still runs 10 s after fg\n");
            kill(-job, SIGTERM);
            sleep(3);
            kill(-job, SIGKILL);
            return 1;
        }
        usleep(20000);
    }
    if (WIFSTOPPED(st)) {
        fprintf(stderr, "tty_job: the job stopped (signal %d)\n", WSTOPSIG(st));
        kill(-job, SIGKILL);
        return 1;
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tty_job CMD [ARGS...]\n");
        return 2;
    }
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
        perror("tty_job: pty");
        return 77;
    }
    const char *name = ptsname(m);
    pid_t sh = fork();
    if (sh == 0) {
        setsid();
        int s = open(name, O_RDWR); /* the controlling terminal of the new session */
        if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
            _exit(3);
        dup2(s, 0);
        dup2(s, 1);
        dup2(s, 2);
        close(s);
        close(m);
        _exit(shell(argv + 1));
    }
    /* The terminal's other end: type "hello" after the fg, collect the output. */
    char out[65536];
    size_t len = 0;
    int typed = 0, shell_done = 0, st = 0;
    double t0 = now();
    while (now() - t0 < 20) {
        struct pollfd p = { .fd = m, .events = POLLIN };
        if (poll(&p, 1, 100) > 0) {
            ssize_t n = read(m, out + len, sizeof out - 1 - len);
            if (n <= 0)
                break; /* EIO: the last slave fd closed */
            len += (size_t)n;
            out[len] = '\0';
        }
        if (!typed && now() - t0 > 1.5) {
            if (write(m, "hello\n", 6) != 6)
                break;
            typed = 1;
        }
        if (!shell_done && waitpid(sh, &st, WNOHANG) == sh)
            shell_done = 1;
        if (shell_done && typed)
            break;
    }
    /* The shell bounds its own wait for the job (10 s after fg). */
    for (double t1 = now(); !shell_done && now() - t1 < 15; usleep(20000))
        shell_done = waitpid(sh, &st, WNOHANG) == sh;
    if (!shell_done) {
        kill(sh, SIGKILL);
        waitpid(sh, &st, 0);
    }
    int ok = shell_done && WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "got hello");
    printf("tty_job: %s (shell %s, status %d)\n--- terminal:\n%s\n---\n",
           ok ? "the job read the line typed after fg" : "FAILED",
           shell_done ? "ended" : "killed", st, out);
    return ok ? 0 : 1;
}
