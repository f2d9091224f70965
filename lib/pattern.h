/*
 * pattern: the user's regular expressions (--focus, --ignore, --retain,
 * --exclude, --list, --disasm), Perl-compatible through PCRE2.
 *
 * A match can fail other than by not matching: PCRE2 stops a pattern
 * that backtracks too much ("match limit exceeded"), or runs out of
 * memory.  Taking that for "no match" would silently empty a report, so
 * such a failure is an error naming the option, the pattern and the text
 * it was matched against.
 */
#ifndef JHEAP_PATTERN_H
#define JHEAP_PATTERN_H

#include <stddef.h>

struct pattern;

/* Compiles RE for option OPT ("focus", shown as --focus).  Returns 0 with
 * *OUT set (free it with pattern_free), JH_EUSAGE with a message naming
 * the option, the pattern and the offset for a bad expression, or
 * JH_ENOMEM. */
int pattern_compile(struct pattern **out, const char *opt, const char *re, char *err,
		    size_t errlen);

/* 1 when S matches, 0 when it does not, or JH_ELIMIT (the match limit or
 * another PCRE2 error) with a message naming the option, the pattern and
 * S.  Not thread-safe: one pattern per thread. */
int pattern_match(struct pattern *p, const char *s, char *err, size_t errlen);

/* pattern_match(), and on a match FN(CTX, NAME, VALUE, LEN) for each
 * named group ((?<name>...)) that took part in it, in the order of the
 * names; VALUE is LEN bytes of S, not terminated. */
int pattern_groups(struct pattern *p, const char *s,
		   void (*fn)(void *ctx, const char *name, const char *value, size_t len), void *ctx,
		   char *err, size_t errlen);

void pattern_free(struct pattern *p);

#endif
