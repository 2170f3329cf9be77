/*
 * coll_rules.h - the selection rules file (P2_COLL_RULES; coll_rules.c says
 * its format), for the choice (coll_select.c).
 */
#ifndef P2_COLL_RULES_H
#define P2_COLL_RULES_H

#include "coll.h"

/* *algo = the algorithm of the first rule that matches the plan's
 * collective, communicator size and bytes per rank and is eligible for it,
 * or NULL if none does. Reads the file named by P2_COLL_RULES at the first
 * call. TCA_SUCCESS, or the file's error (TCA_ERROR_INVALID_ARGUMENT for a
 * bad line, named on stderr once; TCA_ERROR_OUT_OF_MEMORY), the same at
 * every call. */
tcaresult coll_rules_find(const coll_plan *p, const coll_algorithm **algo);

#endif /* P2_COLL_RULES_H */
