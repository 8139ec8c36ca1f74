/* status.c - descriptions of gas_status_t values. */
#include <gas.h>

GAS_EXPORT const char *gas_strerror(gas_status_t status)
{
    switch (status) {
    case GAS_OK:              return "success";
    case GAS_INPROGRESS:      return "operation in progress";
    case GAS_ERR_INVALID:     return "invalid argument";
    case GAS_ERR_RANK:        return "rank out of range";
    case GAS_ERR_BOUNDS:      return "address outside any allocation";
    case GAS_ERR_ALIGN:       return "misaligned address";
    case GAS_ERR_NOT_INIT:    return "libgas is not initialised";
    case GAS_ERR_UNSUPPORTED: return "operation not supported";
    case GAS_ERR_OVERFLOW:    return "size overflow";
    case GAS_ERR_NOMEM:       return "out of memory";
    case GAS_ERR_NOSPACE:     return "symmetric heap or segment full";
    case GAS_ERR_AGAIN:       return "resources temporarily unavailable";
    case GAS_ERR_TIMEOUT:     return "timed out";
    case GAS_ERR_PEER:        return "peer dead or unreachable";
    case GAS_ERR_IO:          return "system call failed";
    case GAS_ERR_BOOTSTRAP:   return "bootstrap (launcher rendezvous) failed";
    case GAS_ERR_INTERNAL:    return "internal error in libgas";
    }
    return "unknown status";
}
