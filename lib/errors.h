/*
 * errors: what library-style functions return.  A negative code and a
 * message in a buffer the caller supplies; only the driver (cli/) prints
 * the message and picks the exit status.
 */
#ifndef JHEAP_ERRORS_H
#define JHEAP_ERRORS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "lib/escape.h"

/* Error codes returned by library-style functions (negative). */
enum {
	JH_OK = 0,
	JH_ENOMEM = -1,   /* out of memory */
	JH_EIO = -2,      /* cannot read or write a file */
	JH_EFORMAT = -3,  /* malformed input */
	JH_ELIMIT = -4,   /* input exceeds a documented limit */
	JH_EUSAGE = -5,   /* the caller asked for something impossible */
};

/* Writes a message into a caller-supplied buffer; returns CODE so that
 * "return jh_err(err, len, JH_EFORMAT, ...)" reads naturally.  Control
 * characters (from the input a message quotes) are escaped: a message is
 * one line, and no escape sequence reaches the terminal. */
__attribute__((format(printf, 4, 5)))
static inline int jh_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		char msg[4096];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		escape_into(err, errlen, msg, strlen(msg));
	}
	return code;
}

#endif
