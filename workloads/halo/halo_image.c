/*
 * halo_image - an N x N image (float pixels, GPU memory) split over a 2-D
 * mesh of ranks (4x4 on 16; a near-square PX x PY otherwise, or -m), each
 * step exchanging one-pixel halos with its eight neighbours (edges and
 * corners, both directions), pipelined (every receive and send posted, then
 * every wait), then filtering its tile with a 3x3 binomial (Gaussian) blur.
 * Over TCA DMA (columns as block-stride descriptors, or packed with --pack)
 * or MPI (GPU buffers, columns packed by a modelled kernel), in simulated
 * time, the result checked bit for bit against a single-process run.
 *
 *   p2run -n P [--map FILE] -- halo_image [-T tca,mpi,hybrid] [-m PXxPY] [--pack]
 *       [-b N] [-e N] [-f F] [-n STEPS] [-w WARMUP] [-c 1|0] [--csv FILE] [--json FILE]
 *
 * The filter: out(x,y) = (in(x-1,y-1) + 2 in(x,y-1) + in(x+1,y-1) + 2 in(x-1,y)
 * + 4 in(x,y) + 2 in(x+1,y) + in(x-1,y+1) + 2 in(x,y+1) + in(x+1,y+1)) / 16, in
 * float, pixels outside the image 0; one output image per step (the input
 * of the next). Depends on halo_common.h, halo_xchg.h, wl_gpu.h, wl_tca.h,
 * wl_options.h, MPI.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo_common.h"
#include "p2.h"
#include "wl_gpu.h"
#include "wl_options.h"
#include "wl_tca.h"

#define PROGRAM "halo_image"

/* The K20X cost of the filter per pixel (wl_gpu.h): the input read once
 * (neighbours from cache/shared memory) and the output written, 4 + 4 bytes;
 * 8 additions and 6 multiplications. */
#define BLUR_BYTES 8.0
#define BLUR_FLOPS 14.0

/* The eight directions; the opposite of d is d ^ 1. */
static const int dir_dx[HX_MAX_LINKS] = {0, 0, -1, 1, -1, 1, 1, -1};
static const int dir_dy[HX_MAX_LINKS] = {-1, 1, 0, 0, -1, 1, -1, 1};

static float initial(int x, int y)
{
    uint32_t h = (uint32_t)x * 2654435761u ^ (uint32_t)y * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h % 4096u) / 4096.0f;
}

/* out = blur(in) on a w x h tile stored with a one-pixel halo, rows `pitch`
 * floats apart. */
static void blur(const float *in, float *out, int w, int h, size_t pitch)
{
    for (int y = 1; y <= h; y++) {
        const float *a = in + (size_t)(y - 1) * pitch, *b = a + pitch, *c = b + pitch;
        float *o = out + (size_t)y * pitch;
        for (int x = 1; x <= w; x++)
            o[x] = (a[x - 1] + 2.0f * a[x] + a[x + 1] + 2.0f * b[x - 1] + 4.0f * b[x] +
                    2.0f * b[x + 1] + c[x - 1] + 2.0f * c[x] + c[x + 1]) *
                   0.0625f;
    }
}

typedef struct img_rank {
    int n, px, py, mx, my;  /* image edge, mesh, this rank's place */
    int x0, y0, w, h;       /* the tile: columns x0 .. x0+w-1, rows y0 .. y0+h-1 */
    size_t pitch;           /* floats per stored row: w + 2 */
    float *data;            /* two images of (h + 2) x pitch */
    size_t image_floats;
    tcaHandle handle;
    hx_plan *plan;
} img_rank;

static void split(int n, int parts, int i, int *start, int *len)
{
    int a = (int)((long)n * i / parts), b = (int)((long)n * (i + 1) / parts);
    *start = a;
    *len = b - a;
}

static float *image(const img_rank *r, int phase) { return r->data + r->image_floats * phase; }

static void img_alloc(img_rank *r, int n, int px, int py, int rank)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->px = px;
    r->py = py;
    r->mx = rank % px;
    r->my = rank / px;
    split(n, px, r->mx, &r->x0, &r->w);
    split(n, py, r->my, &r->y0, &r->h);
    r->pitch = (size_t)r->w + 2;
    r->image_floats = ((size_t)r->h + 2) * r->pitch;
    size_t bytes = HX_PHASES * r->image_floats * sizeof(float);
    WL_TCA(tcaMalloc((void **)&r->data, bytes, tcaMemoryGPU));
    WL_TCA(tcaCreateHandle(&r->handle, r->data, bytes, tcaMemoryGPU));
}

/* Both images: the tile's pixels, halos 0 (outside the image they stay 0;
 * inside, the exchange fills them before they are read). */
static void img_init(img_rank *r)
{
    for (int ph = 0; ph < HX_PHASES; ph++) {
        float *im = image(r, ph);
        memset(im, 0, r->image_floats * sizeof(float));
        for (int y = 1; y <= r->h; y++)
            for (int x = 1; x <= r->w; x++)
                im[(size_t)y * r->pitch + x] = initial(r->x0 + x - 1, r->y0 + y - 1);
    }
}

static void img_free(img_rank *r)
{
    hx_plan_free(r->plan);
    WL_TCA(tcaDestroyHandle(&r->handle));
    WL_TCA(tcaFree(r->data, tcaMemoryGPU));
}

/* Rows y .. y+rows-1, columns x .. x+cols-1 of image `phase`, as a region. */
static hx_region block(const img_rank *r, int phase, int x, int y, int cols, int rows)
{
    size_t start = r->image_floats * phase + (size_t)y * r->pitch + (size_t)x;
    return (hx_region){start * sizeof(float), (size_t)cols * sizeof(float), (size_t)rows,
                       r->pitch * sizeof(float)};
}

/* Send: the tile's edge (or corner) facing direction d; receive: the halo
 * on that side. */
static void img_link(const img_rank *r, int d, int phase, hx_region *send, hx_region *recv)
{
    int dx = dir_dx[d], dy = dir_dy[d];
    int cols = dx ? 1 : r->w, rows = dy ? 1 : r->h;
    int sx = dx < 0 ? 1 : dx > 0 ? r->w : 1, sy = dy < 0 ? 1 : dy > 0 ? r->h : 1;
    int rx = dx < 0 ? 0 : dx > 0 ? r->w + 1 : 1, ry = dy < 0 ? 0 : dy > 0 ? r->h + 1 : 1;
    *send = block(r, phase, sx, sy, cols, rows);
    *recv = block(r, phase, rx, ry, cols, rows);
}

static hx_plan *img_plan(img_rank *r, halo_mode mode, int pack, char *error, size_t size)
{
    hx_link links[HX_MAX_LINKS];
    int count = 0;
    for (int d = 0; d < HX_MAX_LINKS; d++) {
        int nx = r->mx + dir_dx[d], ny = r->my + dir_dy[d];
        if (nx < 0 || nx >= r->px || ny < 0 || ny >= r->py)
            continue;
        hx_link *l = &links[count++];
        memset(l, 0, sizeof *l);
        l->peer = ny * r->px + nx;
        l->id = d;
        l->peer_id = d ^ 1;
        l->transport = halo_link_transport(mode, l->peer);
        for (int ph = 0; ph < HX_PHASES; ph++)
            img_link(r, d, ph, &l->send[ph], &l->recv[ph]);
    }
    return hx_plan_create(links, count, r->data, &r->handle, pack, error, size);
}

static void img_exchange(void *ctx, int phase)
{
    img_rank *r = ctx;
    hx_exchange(r->plan, phase);
}

static void img_compute(void *ctx, int phase)
{
    img_rank *r = ctx;
    blur(image(r, phase), image(r, phase ^ 1), r->w, r->h, r->pitch);
    double pixels = (double)r->w * r->h;
    wl_gpu_kernel(BLUR_BYTES * pixels, BLUR_FLOPS * pixels);
}

/* The same steps in one process over the pixels the tile depends on (one
 * pixel further each step, within the image), then the tile's pixels that
 * differ in any bit. */
static uint64_t img_check(const img_rank *r, int steps)
{
    int m = steps + 1;
    int wx0 = r->x0 - m < 0 ? 0 : r->x0 - m, wy0 = r->y0 - m < 0 ? 0 : r->y0 - m;
    int wx1 = r->x0 + r->w + m > r->n ? r->n : r->x0 + r->w + m;
    int wy1 = r->y0 + r->h + m > r->n ? r->n : r->y0 + r->h + m;
    int w = wx1 - wx0, h = wy1 - wy0;
    size_t pitch = (size_t)w + 2, floats = ((size_t)h + 2) * pitch;
    float *im[2] = {malloc(floats * sizeof(float)), malloc(floats * sizeof(float))};
    if (!im[0] || !im[1]) {
        fprintf(stderr, "%s: out of memory for the check\n", PROGRAM);
        exit(WL_EXIT_FAILURE);
    }
    /* The window and its one-pixel rim: image pixels (never updated: the
     * rim's staleness moves one pixel a step, and stops short of the tile),
     * 0 outside the image. */
    for (int i = 0; i < 2; i++)
        for (int y = 0; y < h + 2; y++)
            for (int x = 0; x < w + 2; x++) {
                int gx = wx0 + x - 1, gy = wy0 + y - 1;
                int in = gx >= 0 && gx < r->n && gy >= 0 && gy < r->n;
                im[i][(size_t)y * pitch + x] = in ? initial(gx, gy) : 0.0f;
            }
    for (int s = 0; s < steps; s++)
        blur(im[s % 2], im[(s + 1) % 2], w, h, pitch);
    const float *want = im[steps % 2], *got = image(r, steps % 2);
    uint64_t wrong = 0;
    for (int y = 1; y <= r->h; y++)
        for (int x = 1; x <= r->w; x++) {
            float a = want[(size_t)(r->y0 - wy0 + y) * pitch + (size_t)(r->x0 - wx0 + x)];
            float b = got[(size_t)y * r->pitch + x];
            wrong += memcmp(&a, &b, sizeof a) != 0;
        }
    free(im[0]);
    free(im[1]);
    return wrong;
}

/* ---- main ------------------------------------------------------------------------ */

static int usage_failure(const wl_program *program, const char *message)
{
    /* Every rank finds the same fault; rank 0 (or a process p2run did not
     * start) names it and gives the job its status. */
    if (p2_rank() > 0)
        return WL_EXIT_OK;
    wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

/* *px x *py: `text` ("4x4"), or the near-square mesh of `ranks` (py the
 * largest divisor not above its square root). */
static int parse_mesh(const char *text, int ranks, int *px, int *py, char *error,
                      size_t size)
{
    if (!*text) {
        int best = 1;
        for (int d = 1; (long)d * d <= ranks; d++)
            if (ranks % d == 0)
                best = d;
        *py = best;
        *px = ranks / best;
        return 0;
    }
    char tail;
    if (sscanf(text, "%dx%d%c", px, py, &tail) != 2 || *px < 1 || *py < 1 ||
        (long)*px * *py != ranks) {
        snprintf(error, size, "-m: '%s' is not PXxPY with PX x PY = %d ranks", text, ranks);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    wl_common_options o;
    wl_options_defaults(&o);
    o.min_bytes = 256;
    o.max_bytes = 1024;
    const char *mode_text = "tca,mpi", *mesh_text = "";
    int pack = 0;
    const wl_option own[] = {
        {"-T", WL_OPTION_STRING, &mode_text, "LIST",
         "transports, in order: tca, mpi, hybrid (TCA inside a PEACH2 sub-cluster, MPI "
         "between)"},
        {"-m", WL_OPTION_STRING, &mesh_text, "PXxPY", "the mesh of ranks (default near-square)"},
        {"--pack", WL_OPTION_FLAG, &pack, NULL,
         "TCA packs column halos with a kernel (else one block-stride descriptor each)"},
    };
    const wl_program program = {PROGRAM,
                                "an image over a 2-D mesh, 8-neighbour halos over TCA or MPI, "
                                "3x3 blur (-b/-e/-f: the image edge N in pixels)",
                                own, sizeof own / sizeof own[0]};
    char error[256];
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, error);
    case WL_PARSE_OK: break;
    }
    halo_mode modes[HALO_MODES];
    int nmodes = 0, px = 0, py = 0;
    if (halo_parse_modes(mode_text, modes, &nmodes, error, sizeof error) != 0)
        return usage_failure(&program, error);
    int ranks = p2_size();
    if (ranks < 1)
        return usage_failure(&program, "not started by p2run (p2run -n P -- halo_image)");
    if (parse_mesh(mesh_text, ranks, &px, &py, error, sizeof error) != 0)
        return usage_failure(&program, error);
    int most = px > py ? px : py;
    if (o.min_bytes < (uint64_t)most || o.max_bytes > 1u << 16) {
        snprintf(error, sizeof error,
                 "-b/-e: the image edge must be at least %d (a pixel per rank of the %dx%d "
                 "mesh) and at most 64K, not %llu .. %llu", most, px, py,
                 (unsigned long long)o.min_bytes, (unsigned long long)o.max_bytes);
        return usage_failure(&program, error);
    }
    MPI_Init(&argc, &argv);
    WL_TCA(tcaInit());
    int rank = p2_rank();
    wl_report *report = NULL;
    char layout[32];
    snprintf(layout, sizeof layout, "%dx%d", px, py);
    if (rank == 0) {
        report = halo_report_open("Image over a 2-D mesh, 8-neighbour halo exchange and 3x3 "
                                  "blur per step, simulated time", o.csv_path, o.json_path,
                                  ranks, o.warmup, o.iterations, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            MPI_Abort(MPI_COMM_WORLD, WL_EXIT_USAGE);
        }
        wl_report_meta(report, "problem", "N x N float image on a %s mesh (rank = y * %d + x), "
                       "one-pixel halos, 3x3 binomial blur, GPU memory", layout, px);
        wl_report_meta(report, "columns", "TCA: %s; MPI: packed by a kernel",
                       pack ? "packed by a kernel (--pack)" : "one block-stride descriptor");
        wl_report_meta(report, "check", "every pixel bit for bit against one process (-c 1)");
    }
    uint64_t total_wrong = 0;
    for (uint64_t n = o.min_bytes; n <= o.max_bytes; n *= (uint64_t)o.factor) {
        for (int m = 0; m < nmodes; m++) {
            img_rank r;
            img_alloc(&r, (int)n, px, py, rank);
            img_init(&r);
            r.plan = img_plan(&r, modes[m], pack, error, sizeof error);
            if (!r.plan) {
                fprintf(stderr, "%s: rank %d: %s\n", PROGRAM, rank, error);
                return WL_EXIT_FAILURE;
            }
            const halo_step_ops ops = {img_exchange, img_compute};
            halo_row_values row = {.n = (int)n, .ranks = ranks, .layout = layout,
                                   .mode = modes[m]};
            halo_run_steps(&ops, &r, o.warmup, o.iterations, &row.times);
            row.halo_bytes = halo_max_u64(hx_send_bytes(r.plan));
            uint64_t wrong = o.check ? img_check(&r, o.warmup + o.iterations) : 0;
            row.wrong = halo_sum_u64(wrong);
            total_wrong += row.wrong;
            halo_report_row(report, &row);
            halo_note_links(report, &row, r.plan);
            img_free(&r);
        }
    }
    return halo_finish(PROGRAM, report, total_wrong, "pixels");
}
