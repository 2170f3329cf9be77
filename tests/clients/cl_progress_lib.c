/*
 * cl_progress_lib: cl_progress_thread's program with its code in a shared
 * library, libcl_progress.so, and this executable calling only that library,
 * as XcalableMP's TCA backend lives in libxmp.so under a program mpicc
 * linked. The executable is linked with --as-needed (mpicc's habit), so it
 * needs no libp2tca of its own: the library's thread calls (pthread_create,
 * pthread_cond_wait, pthread_join) reach the runtime only if p2run preloads
 * it, and otherwise libc's, where the helper gets no lane and the main
 * thread's wait holds the rank's time. The figures must be cl_progress_thread's.
 *
 * Usage: cl_progress_lib [ROUNDS [sleep|mpi|spin]], as cl_progress_thread.
 */
int cl_progress_main(int argc, char **argv);

int main(int argc, char **argv)
{
    return cl_progress_main(argc, argv);
}
