/*
 * test_abort_threads - several threads of one rank abort at once (argv[1]:
 * "abort" calls gas_abort(3, ...), "error" makes each raise an error under
 * GAS_ERRORS=abort).  The job must end with one clean report: exit status 3
 * (or 1 for errors) and one whole message; tests/scripts/abort-threads.sh
 * checks what gasrun prints.  Other ranks wait in a barrier meanwhile.
 * argv[2], if given, is gas_abort's code instead of 3 (512: a code whose low
 * 8 bits are 0 must still exit 1, never 0).
 */
#include <gas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4 };
static pthread_barrier_t start;
static int raise_error, code = 3;

static void *thread_main(void *arg)
{
    char msg[64];
    snprintf(msg, sizeof msg, "thread %d aborts", (int)(intptr_t)arg);
    pthread_barrier_wait(&start);
    if (raise_error) {
        gas_ptr_t r;
        gas_ptr_add(GAS_NULL, 1, &r);          /* GAS_ERR_INVALID: aborts */
    }
    gas_abort(code, msg);
    return NULL;
}

int main(int argc, char **argv)
{
    raise_error = argc > 1 && strcmp(argv[1], "error") == 0;
    if (argc > 2)
        code = atoi(argv[2]);
    if (gas_init() != GAS_OK)
        return 2;
    if (gas_rank() == gas_nranks() - 1) {
        pthread_t t[THREADS];
        pthread_barrier_init(&start, NULL, THREADS);
        for (int i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
    }
    gas_barrier();
    gas_finalize();
    return 0;
}
