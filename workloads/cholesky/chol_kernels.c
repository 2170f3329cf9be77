/*
 * chol_kernels.c - the Cholesky's numerics and their cost (chol.h): the four
 * tile kernels as plain loops on the host (no BLAS dependency), what the
 * Tesla K20X model charges for each (wl_gpu.h: launch plus the larger of the
 * memory and the arithmetic time, the arithmetic at gpu_dp_gflops times the
 * kernel's efficiency, chol_<kind>_eff in params.def, read with p2_param),
 * the test matrix, and the residual ||A - L L^T|| / ||A||.
 * Depends on wl_gpu.h and p2.h.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "chol.h"
#include "p2.h"
#include "wl_gpu.h"

const char *const chol_kind_name[CHOL_KINDS] = {"potrf", "trsm", "syrk", "gemm"};

/* ---- The test matrix -------------------------------------------------------- */

/* splitmix64's finaliser: a well-mixed 64-bit hash. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double chol_matrix_element(int n, int i, int j)
{
    if (i == j)
        return (double)n;
    if (i < j) {
        int s = i;
        i = j, j = s;
    }
    uint64_t h = mix(((uint64_t)(uint32_t)i << 32) | (uint32_t)j);
    return (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

void chol_matrix_tile(int n, int nb, int ti, int tj, double *tile)
{
    for (int r = 0; r < nb; r++)
        for (int c = 0; c < nb; c++)
            tile[(size_t)r * nb + c] = chol_matrix_element(n, ti * nb + r, tj * nb + c);
}

/* ---- The kernels (row-major nb x nb) --------------------------------------- */

static double dot(const double *x, const double *y, int n)
{
    double s = 0;
    for (int m = 0; m < n; m++)
        s += x[m] * y[m];
    return s;
}

int chol_potrf(int nb, double *c)
{
    for (int j = 0; j < nb; j++) {
        double *rj = c + (size_t)j * nb;
        double d = rj[j] - dot(rj, rj, j);
        if (!(d > 0))
            return -1;
        rj[j] = sqrt(d);
        for (int i = j + 1; i < nb; i++) {
            double *ri = c + (size_t)i * nb;
            ri[j] = (ri[j] - dot(ri, rj, j)) / rj[j];
        }
        for (int k = j + 1; k < nb; k++)
            rj[k] = 0.0;
    }
    return 0;
}

void chol_trsm(int nb, const double *a, double *c)
{
    /* Row x of c solves x L^T = b, i.e. L x^T = b^T: forward substitution. */
    for (int r = 0; r < nb; r++) {
        double *x = c + (size_t)r * nb;
        for (int k = 0; k < nb; k++) {
            const double *lk = a + (size_t)k * nb;
            x[k] = (x[k] - dot(x, lk, k)) / lk[k];
        }
    }
}

void chol_syrk(int nb, const double *a, double *c)
{
    for (int r = 0; r < nb; r++)
        for (int k = 0; k <= r; k++)
            c[(size_t)r * nb + k] -= dot(a + (size_t)r * nb, a + (size_t)k * nb, nb);
}

void chol_gemm(int nb, const double *a, const double *b, double *c)
{
    for (int r = 0; r < nb; r++)
        for (int k = 0; k < nb; k++)
            c[(size_t)r * nb + k] -= dot(a + (size_t)r * nb, b + (size_t)k * nb, nb);
}

/* ---- Costs ------------------------------------------------------------------ */

static double eff[CHOL_KINDS];
static pthread_once_t eff_once = PTHREAD_ONCE_INIT;

static void eff_load(void)
{
    eff[CHOL_POTRF] = p2_param("chol_potrf_eff");
    eff[CHOL_TRSM] = p2_param("chol_trsm_eff");
    eff[CHOL_SYRK] = p2_param("chol_syrk_eff");
    eff[CHOL_GEMM] = p2_param("chol_gemm_eff");
}

double chol_kernel_efficiency(int kind)
{
    pthread_once(&eff_once, eff_load);
    return eff[kind];
}

double chol_kernel_flops(int kind, int nb)
{
    double b = nb;
    switch (kind) {
    case CHOL_POTRF: return b * b * b / 3.0;
    case CHOL_TRSM: return b * b * b;
    case CHOL_SYRK: return b * b * (b + 1.0);
    default: return 2.0 * b * b * b;
    }
}

double chol_kernel_seconds(int kind, int nb)
{
    /* Device memory touched, in tiles: POTRF reads and writes its tile, TRSM
     * and SYRK read two and write one, GEMM reads three and writes one. */
    static const double tiles[CHOL_KINDS] = {2, 3, 3, 4};
    double bytes = tiles[kind] * (double)nb * (double)nb * sizeof(double);
    return wl_gpu_kernel_s(bytes, chol_kernel_flops(kind, nb) / chol_kernel_efficiency(kind));
}

/* ---- The check ---------------------------------------------------------------- */

double chol_residual(int n, const double *l)
{
    double num = 0, den = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double a = chol_matrix_element(n, i, j);
            double d = a - dot(l + (size_t)i * n, l + (size_t)j * n, j + 1);
            num += d * d;
            den += a * a;
        }
    return sqrt(num) / sqrt(den);
}
