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
#include <fcntl.h>
#include <stdint.h>
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

/* The parts of a 64-bit ELF file that tell how it may use MPI. */
typedef struct {
    int needs_mpi;   /* a DT_NEEDED of Open MPI */
    int needs_ours;  /* a DT_NEEDED of our runtime (libp2tca.so) */
    int dynamic;     /* has a dynamic section (shared libraries get loaded) */
    int calls_dlopen; /* imports dlopen: loads libraries it names at run time */
    char interp[PATH_MAX]; /* PT_INTERP, the dynamic loader, or "" */
} elf_facts;

/* Reads `n` bytes at `off` into a new buffer (NUL-terminated), or NULL. */
static void *read_at(FILE *f, uint64_t off, uint64_t n)
{
    if (n > (1u << 26))
        return NULL;
    char *buf = calloc(n + 1, 1);
    if (buf && (fseek(f, (long)off, SEEK_SET) != 0 || fread(buf, 1, n, f) != n)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Whether the symbol table `sym` (with its strings) imports `name`. */
static int imports(const Elf64_Sym *sym, size_t nsym, const char *strs, size_t strsize,
                   const char *name)
{
    for (size_t i = 0; i < nsym; i++)
        if (sym[i].st_shndx == SHN_UNDEF && sym[i].st_name < strsize &&
            strcmp(strs + sym[i].st_name, name) == 0)
            return 1;
    return 0;
}

/* 0 and `facts` filled, or -1 if `path` is no 64-bit ELF file we can read. */
static int read_elf(const char *path, elf_facts *facts)
{
    memset(facts, 0, sizeof *facts);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shnum > 4096 || eh.e_phnum > 4096) {
        fclose(f);
        return -1;
    }
    Elf64_Phdr *ph = read_at(f, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof *ph);
    for (unsigned i = 0; ph && i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_INTERP && ph[i].p_filesz < sizeof facts->interp) {
            char *interp = read_at(f, ph[i].p_offset, ph[i].p_filesz);
            if (interp)
                snprintf(facts->interp, sizeof facts->interp, "%s", interp);
            free(interp);
        }
    free(ph);
    Elf64_Shdr *sh = read_at(f, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh);
    for (unsigned i = 0; sh && i < eh.e_shnum; i++) {
        if ((sh[i].sh_type != SHT_DYNAMIC && sh[i].sh_type != SHT_DYNSYM) ||
            sh[i].sh_link >= eh.e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        char *strs = read_at(f, str->sh_offset, str->sh_size);
        void *data = read_at(f, sh[i].sh_offset, sh[i].sh_size);
        if (strs && data && sh[i].sh_type == SHT_DYNAMIC) {
            facts->dynamic = 1;
            const Elf64_Dyn *dyn = data;
            for (size_t d = 0; d < sh[i].sh_size / sizeof *dyn; d++)
                if (dyn[d].d_tag == DT_NEEDED && dyn[d].d_un.d_val < str->sh_size) {
                    facts->needs_mpi |= open_mpi_lib(strs + dyn[d].d_un.d_val);
                    facts->needs_ours |= strncmp(strs + dyn[d].d_un.d_val, "libp2tca", 8) == 0;
                }
        } else if (strs && data)
            facts->calls_dlopen |= imports(data, sh[i].sh_size / sizeof(Elf64_Sym), strs,
                                           str->sh_size, "dlopen");
        free(strs);
        free(data);
    }
    free(sh);
    fclose(f);
    return 0;
}

/* What the libraries a program needs, at any depth, tell: whether one is
 * Open MPI's (liblammps.so linking libmpi, under an lmp that does not), and
 * where our runtime (libp2tca.so) resolves when only a library needs it
 * (libxmp.so, under an executable that mpicc linked with --as-needed), as
 * the program's own dynamic loader resolves them: `interp --list path`,
 * which maps the libraries and runs none of their code. */
static void scan_closure(const char *interp, const char *path, int *needs_mpi, char *runtime,
                         size_t runtime_len)
{
    int fd[2];
    if (!interp[0] || access(interp, X_OK) != 0 || pipe(fd) != 0)
        return;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        unsetenv("LD_PRELOAD");
        execl(interp, interp, "--list", path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *out = pid > 0 ? fdopen(fd[0], "r") : NULL;
    char line[PATH_MAX + 256];
    while (out && fgets(line, sizeof line, out)) {
        const char *name = line + strspn(line, " \t");
        *needs_mpi |= open_mpi_lib(name);
        /* "libp2tca.so => /where/libp2tca.so (0x...)" */
        const char *arrow = strstr(name, " => /");
        if (runtime && strncmp(name, "libp2tca.so", 11) == 0 && arrow) {
            const char *where = arrow + 4;
            size_t len = strcspn(where, " \n");
            if (len < runtime_len)
                snprintf(runtime, runtime_len, "%.*s", (int)len, where);
        }
    }
    if (out)
        fclose(out);
    else
        close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* Whether `path` starts with "#!": a script, whose interpreter p2run cannot
 * see into. */
static int is_script(const char *path)
{
    char head[2] = {0, 0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, 2, f) : 0;
    if (f)
        fclose(f);
    return got == 2 && head[0] == '#' && head[1] == '!';
}

static int file_contains(const char *path, const char *needle);

mpi_use program_mpi_use(const char *path, char *runtime, size_t runtime_len)
{
    elf_facts facts;
    runtime[0] = '\0';
    if (read_elf(path, &facts) != 0)
        return is_script(path) ? MPI_USE_MAYBE : MPI_USE_NONE;
    int needs_mpi = facts.needs_mpi;
    /* The runtime interposes on the thread calls (pthread_create, the
     * waits that park a thread): in the search order they must come before
     * libc's, which they do when the executable needs libp2tca itself or
     * carries a static copy, and do not when only a library does (the
     * loader searches the executable's libraries, libc among them, before
     * theirs). Preloaded, it comes first whatever the link order. */
    int ours = facts.needs_ours || file_contains(path, "P2_RT_OWNER");
    if (facts.dynamic)
        scan_closure(facts.interp, path, &needs_mpi, ours ? NULL : runtime, runtime_len);
    if (needs_mpi)
        return MPI_USE_LINKED;
    /* A TCA program imports dlopen for the runtime linked into it (which
     * finds libc's and the CUDA driver's own symbols with it, lib/src/rt),
     * and loads no MPI: the runtime's variable name marks a static copy. */
    if (facts.calls_dlopen && !ours)
        return MPI_USE_MAYBE;
    return MPI_USE_NONE;
}

/* LD_PRELOAD=[runtime:][layer][:what was there]: the runtime's thread calls
 * come before libc's, the layer's MPI_* before Open MPI's. */
const char *preload_value(const job_run *jr)
{
    static char preload[3 * PATH_MAX + 32];
    const char *parts[] = {jr->tca_runtime, jr->mpi_layer, getenv("LD_PRELOAD")};
    size_t n = 0;
    preload[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i] && *parts[i])
            n += (size_t)snprintf(preload + n, n < sizeof preload ? sizeof preload - n : 0, "%s%s",
                                  n ? ":" : "", parts[i]);
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
