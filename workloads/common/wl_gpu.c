/*
 * wl_gpu.c - the K20X kernel cost model (wl_gpu.h). Depends on p2.h
 * (p2_param, p2_compute).
 */
#include "wl_gpu.h"

#include <pthread.h>

#include "p2.h"

static struct {
    double kernel_s;  /* gpu_kernel_ns */
    double mem_Bps;   /* gpu_mem_gbps */
    double flops;     /* gpu_dp_gflops, per second */
} k20x;
static pthread_once_t k20x_once = PTHREAD_ONCE_INIT;

static void k20x_load(void)
{
    k20x.kernel_s = p2_param("gpu_kernel_ns") * 1e-9;
    k20x.mem_Bps = p2_param("gpu_mem_gbps") * 1e9;
    k20x.flops = p2_param("gpu_dp_gflops") * 1e9;
}

double wl_gpu_kernel_s(double bytes, double flops)
{
    pthread_once(&k20x_once, k20x_load);
    double mem = bytes > 0 ? bytes / k20x.mem_Bps : 0.0;
    double alu = flops > 0 ? flops / k20x.flops : 0.0;
    return k20x.kernel_s + (mem > alu ? mem : alu);
}

void wl_gpu_kernel(double bytes, double flops)
{
    p2_compute(wl_gpu_kernel_s(bytes, flops));
}
