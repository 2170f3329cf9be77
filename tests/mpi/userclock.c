/* userclock: a user's own shared library (built in the tree, outside the
 * system's library directories) that reads the C library's clock: its calls
 * are the program's, so under p2run's --clock model they read the rank's
 * virtual clock (lib/src/rt/rt_time.c). Used by mpi_clocks. */
#include <stddef.h>
#include <sys/time.h>

double userclock_now(void);

double userclock_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}
