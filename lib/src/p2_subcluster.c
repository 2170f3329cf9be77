/*
 * p2_subcluster.c - p2_subcluster (p2.h): which PEACH2 network (sub-cluster)
 * a rank's node is on, as the simulator numbered them in the job segment
 * (p2_job.device_network, the row of the "peach2" device). Depends on the
 * rank runtime only, so it answers before tcaInit and in MPI programs.
 */
#include <string.h>

#include "p2.h"

#include "rt/rt.h"

int p2_subcluster(int rank)
{
    p2_rt *rt = p2_rt_get();
    int node = p2_rt_rank_node(rt, rank);
    if (node < 0 || node >= P2_JOB_MAX_RANKS)
        return -1;
    for (unsigned d = 0; d < rt->ndevices; d++)
        if (strcmp(rt->device[d], "peach2") == 0) {
            unsigned net = rt->job->device_network[d][node];
            return net == P2_JOB_NO_NETWORK ? -1 : (int)net;
        }
    return -1; /* the node has no PEACH2 board */
}
