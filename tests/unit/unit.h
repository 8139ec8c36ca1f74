/* unit.h - minimal checking helpers for the unit tests. */
#ifndef GAS_TEST_UNIT_H
#define GAS_TEST_UNIT_H
#include <stdio.h>
#include <stdlib.h>

static int unit_failures;

#define UCHECK(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            if (unit_failures++ < 20) {                                      \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                \
                fputc('\n', stderr);                                         \
            }                                                                \
        }                                                                    \
    } while (0)

static inline int unit_finish(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: %d checks failed\n", name, unit_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

static inline unsigned long long unit_rand(unsigned long long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
#endif
