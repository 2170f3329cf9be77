/*
 * p2run_runtime.c - the ranks' runtime: which MPI layer is preloaded
 * (libp2mpi.so, into a program linked with Open MPI or started by mpirun)
 * and which CUDA runtime the ranks get (--gpu: the GPU's, or the emulated
 * one put first on LD_LIBRARY_PATH). Depends on the flags and files
 * (p2run_options.c: programs, p2run's own files).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "p2run_internal.h"

/* ---- The MPI layer ---------------------------------------------------------- */

/* The virtual-time MPI layer (mpi/, libp2mpi.so) preloaded into MPI ranks;
 * built next to p2run, so the build tree needs no special case. */
int find_mpi_layer(const char *why, char *out, size_t outlen)
{
    return find_shipped(why, "P2_MPI_LAYER", "libp2mpi.so", R_OK, NULL, out, outlen);
}

/* Open MPI's C library, or one of its language bindings (libmpi_mpifh.so,
 * libmpi_usempif08.so, libmpi_usempi_ignore_tkr.so: a Fortran program
 * linked with --as-needed names only these, libmpi.so comes with them;
 * libmpi_cxx.so). */
static int open_mpi_lib(const char *name)
{
    return strncmp(name, "libmpi.so", 9) == 0 ||
           (strncmp(name, "libmpi_", 7) == 0 && strstr(name, ".so") != NULL);
}

/* 1 if the ELF executable at `path` links Open MPI (a DT_NEEDED libmpi.so or
 * one of its bindings): p2run then preloads the MPI layer into its ranks
 * without mpirun too. */
int links_mpi(const char *path)
{
    int found = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > 4096) {
        fclose(f);
        return 0;
    }
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    if (sh && fseek(f, (long)eh.e_shoff, SEEK_SET) == 0 &&
        fread(sh, sizeof *sh, eh.e_shnum, f) == eh.e_shnum) {
        for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
            if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh.e_shnum)
                continue;
            const Elf64_Shdr *str = &sh[sh[i].sh_link];
            size_t ndyn = sh[i].sh_size / sizeof(Elf64_Dyn);
            if (ndyn > 65536 || str->sh_size > (1u << 24))
                continue;
            Elf64_Dyn *dyn = calloc(ndyn ? ndyn : 1, sizeof *dyn);
            char *strs = calloc(str->sh_size + 1, 1);
            if (dyn && strs && fseek(f, (long)sh[i].sh_offset, SEEK_SET) == 0 &&
                fread(dyn, sizeof *dyn, ndyn, f) == ndyn &&
                fseek(f, (long)str->sh_offset, SEEK_SET) == 0 &&
                fread(strs, 1, str->sh_size, f) == str->sh_size)
                for (size_t d = 0; d < ndyn && !found; d++)
                    if (dyn[d].d_tag == DT_NEEDED && dyn[d].d_un.d_val < str->sh_size &&
                        open_mpi_lib(strs + dyn[d].d_un.d_val))
                        found = 1;
            free(dyn);
            free(strs);
        }
    }
    free(sh);
    fclose(f);
    return found;
}

/* LD_PRELOAD=layer[:what was there]: the layer's MPI_* come before Open MPI's. */
const char *preload_value(const job_run *jr)
{
    static char preload[2 * PATH_MAX + 32];
    const char *old = getenv("LD_PRELOAD");
    snprintf(preload, sizeof preload, "%s%s%s", jr->mpi_layer, old && *old ? ":" : "",
             old && *old ? old : "");
    return preload;
}

/* ---- The ranks' CUDA runtime ------------------------------------------------- */

#ifndef P2_CUDART_SONAME
#define P2_CUDART_SONAME "libcudart.so"
#endif

/* Whether the file at `path` contains `needle` (a crude but cheap look at a
 * program's dynamic section strings). */
static int file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = strlen(needle), have = 0, got;
    char buf[1 << 16];
    int found = 0;
    while (!found && (got = fread(buf + have, 1, sizeof buf - have, f)) > 0) {
        have += got;
        found = memmem(buf, have, needle, n) != NULL;
        if (have > n) { /* keep the tail: a match may straddle reads */
            memmove(buf, buf + have - (n - 1), n - 1);
            have = n - 1;
        }
    }
    fclose(f);
    return found;
}

/* The program's path as execvp would find it ("" if not found). */
static void program_path(const char *prog, char *out, size_t outlen)
{
    out[0] = '\0';
    if (strchr(prog, '/')) {
        snprintf(out, outlen, "%s", prog);
        return;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, outlen, "%.*s/%s", (int)len, path, prog);
        if (access(out, X_OK) == 0)
            return;
        path = colon ? colon + 1 : NULL;
    }
    out[0] = '\0';
}

/* The emulated runtime's directory: $P2_CUDA_EMU_DIR, else installed beside
 * p2run (../lib/peach2sim/cuda), else the build tree's. 0 if none holds it. */
static int find_cuda_emu(char *out, size_t outlen)
{
    char lib[PATH_MAX + 64];
    const char *env = getenv("P2_CUDA_EMU_DIR");
    if (env && *env) {
        snprintf(out, outlen, "%s", env);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        return access(lib, R_OK) == 0;
    }
#ifdef P2_INSTALL_CUDA_EMU_REL
    if (self_dir()[0]) {
        snprintf(out, outlen, "%s/%s", self_dir(), P2_INSTALL_CUDA_EMU_REL);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        if (access(lib, R_OK) == 0)
            return 1;
    }
#endif
#ifdef P2_CUDA_EMU_BUILD_DIR
    if (in_build_tree()) {
        snprintf(out, outlen, "%s", P2_CUDA_EMU_BUILD_DIR);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        if (access(lib, R_OK) == 0)
            return 1;
    }
#endif
    return 0;
}

/* Whether a GPU is usable: the driver's device node exists and the driver
 * library, in a child (so p2run never initialises CUDA itself), finds a
 * device. *why says why not. */
static int gpu_usable(char *why, size_t whylen)
{
    if (access("/dev/nvidia0", F_OK) != 0 || access("/dev/nvidiactl", F_OK) != 0) {
        snprintf(why, whylen, "no /dev/nvidia0");
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
            _exit(2);
        int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
        int (*cu_count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
        int n = 0;
        if (!cu_init || !cu_count || cu_init(0) != 0 || cu_count(&n) != 0 || n < 1)
            _exit(3);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
        snprintf(why, whylen, "cannot probe the driver");
        return 0;
    }
    if (WEXITSTATUS(status) == 2)
        snprintf(why, whylen, "no driver library libcuda.so.1");
    else if (WEXITSTATUS(status) != 0)
        snprintf(why, whylen, "the driver finds no device");
    return WEXITSTATUS(status) == 0;
}

/* --gpu: picks the ranks' CUDA runtime and says which in one line, for
 * programs that use CUDA (or when --gpu was given). For the emulated one,
 * puts its directory first on LD_LIBRARY_PATH (inherited by the ranks and by
 * mpirun). Returns 0, or P2RUN_NOEXEC when the forced choice is impossible. */
int select_gpu(const options *o)
{
    char path[PATH_MAX], why[128] = "";
    program_path(o->program[0], path, sizeof path);
    int uses_cuda = path[0] && file_contains(path, "libcudart.so");
    int explicit_choice = strcmp(o->gpu, "auto") != 0;
    /* The static runtime carries its error names (a program that only uses
     * the driver API, libcuda.so.1, does not). */
    if (path[0] && !uses_cuda && file_contains(path, "cudaErrorInsufficientDriver"))
        fprintf(stderr, "p2run: warning: %s seems to link the CUDA runtime statically (nvcc's "
                        "default); build it with -cudart shared so that p2run can choose its "
                        "runtime\n", o->program[0]);
    if (!uses_cuda && !explicit_choice)
        return 0;
    int usable = strcmp(o->gpu, "emulated") != 0 && gpu_usable(why, sizeof why);
    if (strcmp(o->gpu, "real") == 0 || usable) {
        /* Forced onto a machine without a usable GPU, the ranks' runtime will
         * say so itself; the line says why already. */
        fprintf(stderr, "p2run: GPU: the real CUDA runtime (%s%s)\n",
                !explicit_choice ? "a GPU is usable" : usable ? "--gpu real" : "--gpu real; no usable GPU: ",
                explicit_choice && !usable ? why : "");
        return 0;
    }
    char dir[PATH_MAX];
    if (!find_cuda_emu(dir, sizeof dir)) {
        fprintf(stderr, "p2run: GPU: the emulated CUDA runtime (%s) is not installed beside "
                        "p2run; set P2_CUDA_EMU_DIR to its directory\n", P2_CUDART_SONAME);
        return explicit_choice ? P2RUN_NOEXEC : 0;
    }
    fprintf(stderr, "p2run: GPU: emulated CUDA runtime (%s%s) from %s\n",
            explicit_choice ? "--gpu emulated" : "no usable GPU: ", explicit_choice ? "" : why,
            dir);
    const char *old = getenv("LD_LIBRARY_PATH");
    char *value = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
    if (!value)
        return 1;
    sprintf(value, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_LIBRARY_PATH", value, 1);
    free(value);
    return 0;
}
