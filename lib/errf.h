/*
 * errf.h: how a fallible call writes its message into the caller's
 * buffer (char *err, size_t errlen), as every fallible call here takes
 * one: snprintf that also takes a NULL buffer or a length of 0.  New code
 * writes through it; some older code calls snprintf(err, errlen, ...)
 * itself, which does the same for a buffer that is not NULL.  Usable from
 * the C++ Gloo shim too.
 */
#ifndef HUNTER_ERRF_H
#define HUNTER_ERRF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Format into err[errlen]; nothing when err is NULL or errlen is 0. */
void	errf(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
