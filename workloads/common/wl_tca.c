/*
 * wl_tca.c - failure reporting for TCA calls in workloads (wl_tca.h).
 */
#include "wl_tca.h"

#include <stdio.h>
#include <stdlib.h>

#include "p2.h"
#include "wl_options.h"

/* Set once at start-up, read by failure messages. */
static const char *program_name = "workload";

void wl_set_program_name(const char *name)
{
    if (name && *name)
        program_name = name;
}

const char *wl_program_name(void)
{
    return program_name;
}

void wl_tca_check(tcaresult result, const char *call, const char *file, int line)
{
    if (result == TCA_SUCCESS)
        return;
    fprintf(stderr, "%s: rank %d: %s failed: %s (%s:%d)\n", program_name, p2_rank(), call,
            tcaGetErrorString(result), file, line);
    exit(WL_EXIT_FAILURE);
}
