/*
 * merge: one profile added into another, in two ways.
 *
 *   profile_merge()  by address, before symbolization: the driver's way
 *                    for a few profiles (and --base); locations with the
 *                    same address and mapping are one, and the symbols
 *                    fold them after (profile_fold_by_symbol);
 *   struct symmerge  by symbol, after symbolization, one profile at a
 *                    time (a fleet's dumps, streamed by cli/fleet.c):
 *                    each profile is folded into the total by its frames
 *                    and then released, so that memory holds the total
 *                    and one dump, not every dump.
 *
 * A symmerge also remembers where each code place (a file and an offset
 * in it: profile_code_place) led, so that the next dump of the same
 * program, in any process and whatever its address layout, finds its
 * locations without being symbolized: symmerge_known() marks them
 * (PF_SYM_ELSEWHERE) and symbolize_profile() passes over them.
 *
 * Both keep every sample's labels (analyzer/labels.h: the driver sets
 * an input's on its samples, profile_set_labels), so that samples of
 * inputs with different labels stay apart.
 */
#ifndef JHEAP_MERGE_H
#define JHEAP_MERGE_H

#include <stdbool.h>
#include "analyzer/profile.h"

/* Adds SRC into DST with every value multiplied by SIGN: mappings, locations
 * (same address and mapping), samples (same location vector and labels)
 * and thread values merge; presymbols are copied.  With a negative SIGN,
 * SRC's values are also added to the samples' base[] (the "before" side
 * of a diff). */
int profile_merge(struct profile *dst, const struct profile *src, double sign,
		  char *err, size_t errlen);

struct symmerge;

/* A merger into DST, which must be empty or made by this merger; with
 * BY_ADDRESS (--addresses) locations fold only when they also hold the
 * same code place.  NULL when out of memory. */
struct symmerge *symmerge_new(struct profile *dst, bool by_address);
/* After the last profile: a mapping of a dump that needed no lookup (a
 * layout met only once its code was known) takes what the symbolizer
 * found of the same mapping in another layout (object, build id, what
 * its frames have), as if it had been symbolized itself. */
void symmerge_finish(struct symmerge *m);
void symmerge_free(struct symmerge *m);

/* Marks every location of SRC whose code place an earlier profile had
 * (PF_SYM_ELSEWHERE, its total location noted), so that
 * symbolize_profile() looks up only the others.  Returns how many are
 * left to symbolize, or a negative JH_ code. */
int64_t symmerge_known(struct symmerge *m, struct profile *src);

/* Adds SRC (symbolized, its known locations marked) into the total with
 * every value multiplied by SIGN (a negative SIGN also adds to base[], as
 * profile_merge() does).  SRC may be released afterwards.  Returns 0 or
 * a negative JH_ code. */
int symmerge_add(struct symmerge *m, const struct profile *src, double sign);

#endif
