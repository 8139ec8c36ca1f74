/*
 * vec.h - insert into a growable array of fixed-size elements (the sorted
 * range lists of big.c and held.c).
 */
#ifndef GAS_AL_VEC_H
#define GAS_AL_VEC_H

#include <stdlib.h>
#include <string.h>

/*
 * Insert the element at index `at` (<= *n) of the array *arr of *n elements
 * of `size` bytes, growing it (doubling, from `first`) when *n == *cap:
 * 0, or -1 when there is no memory (nothing changed).
 */
static inline int gas_al_vec_insert(void *arr_p, size_t *n, size_t *cap, size_t first,
                                    size_t size, size_t at, const void *elem)
{
    char **arr = arr_p;
    if (*n == *cap) {
        size_t grown = *cap ? 2 * *cap : first;
        char *a = realloc(*arr, grown * size);
        if (a == NULL)
            return -1;
        *arr = a;
        *cap = grown;
    }
    memmove(*arr + (at + 1) * size, *arr + at * size, (*n - at) * size);
    memcpy(*arr + at * size, elem, size);
    (*n)++;
    return 0;
}

/* Remove the element at index `at` (< *n). */
static inline void gas_al_vec_remove(void *arr, size_t *n, size_t size, size_t at)
{
    char *a = arr;
    memmove(a + at * size, a + (at + 1) * size, (*n - at - 1) * size);
    (*n)--;
}

#endif
