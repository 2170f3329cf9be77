/*
 * wl_gpu.h - the workloads' cost model of HA-PACS/TCA's GPU, a Tesla K20X:
 * what a kernel the program stands for would take, charged to the rank's
 * clock. The programs (CG, halo exchanges, Cholesky, the stencil) compute
 * their numerics on the host, so results are checked, and charge the kernels
 * they replace with this.
 *
 * A kernel that moves `bytes` of device memory (read plus written) and does
 * `flops` double-precision operations takes
 *     gpu_kernel_ns + max(bytes / gpu_mem_gbps, flops / gpu_dp_gflops)
 * (a roofline with a fixed launch-to-completion cost). The three figures are
 * rank parameters (params.def, "The applications' GPU"), read once with
 * p2_param(), so `p2run --params FILE` changes them.
 */
#ifndef WL_GPU_H
#define WL_GPU_H

/* Seconds the kernel takes. */
double wl_gpu_kernel_s(double bytes, double flops);
/* Charges wl_gpu_kernel_s(bytes, flops) to the rank's clock. */
void wl_gpu_kernel(double bytes, double flops);

#endif /* WL_GPU_H */
