/*
 * errf.h: the one way an error message is written into a caller's
 * buffer (char *err, size_t errlen), as every fallible call here takes
 * one.  Usable from the C++ Gloo shim too.
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
