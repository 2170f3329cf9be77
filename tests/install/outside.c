/*
 * outside: a TCA program built outside the tree against an installed
 * peach2sim (pkg-config p2tca, or find_package(peach2sim)), run by the
 * installed p2run with 2 ranks. Rank 0 DMAs 64 bytes into rank 1's buffer
 * with a notification; rank 1 waits for it and checks every byte.
 * Exit 0 when all is right; a failure says which call or byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <p2.h>
#include <tca-api.h>

#define BYTES 64
#define SLOT 3
#define TAG 42

/* Its own check, not tests/common/p2_check.h: this program sees only what
 * is installed, as a user's would. */
#define CHECK(call)                                                                      \
    do {                                                                                 \
        tcaresult r_ = (call);                                                           \
        if (r_ != TCA_SUCCESS) {                                                         \
            fprintf(stderr, "rank %d: %s: %s\n", p2_rank(), #call, tcaGetErrorString(r_)); \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 37 + 11);
}

int main(void)
{
    int rank = p2_rank(), size = p2_size();
    if (rank < 0 || size != 2) {
        fprintf(stderr, "outside: run me with p2run -n 2 (rank %d, size %d)\n", rank, size);
        return 1;
    }
    if (rank == 0)
        printf("outside: %s (%d.%d.%d)\n", TCA_LIB_VERSION, TCA_LIB_VERSION_MAJOR,
               TCA_LIB_VERSION_MINOR, TCA_LIB_VERSION_PATCH);

    CHECK(tcaInit());
    uint8_t *buf = NULL;
    CHECK(tcaMalloc((void **)&buf, BYTES, tcaMemoryCPU));
    for (size_t i = 0; i < BYTES; i++)
        buf[i] = rank == 0 ? pattern(i) : 0;
    tcaHandle handles[2], mine;
    CHECK(tcaCreateHandle(&mine, buf, BYTES, tcaMemoryCPU));
    CHECK(p2_exchange(&mine, handles, sizeof mine));

    if (rank == 0) {
        tcaDesc *desc = tcaDescNew();
        if (!desc) {
            fprintf(stderr, "rank 0: tcaDescNew failed\n");
            return 1;
        }
        CHECK(tcaDescSetMemcpy(desc, &handles[1], 0, &mine, 0, BYTES, tcaDMANotify, SLOT, TAG));
        CHECK(tcaDescSet(desc, 0));
        CHECK(tcaStartDMADesc(0));
        CHECK(tcaWaitDMAC(0));
        CHECK(tcaDescFree(desc));
    } else {
        CHECK(tcaWaitDMARecvDesc(&handles[0], SLOT, TAG)); /* rank 0's DMA */
        for (size_t i = 0; i < BYTES; i++)
            if (buf[i] != pattern(i)) {
                fprintf(stderr, "rank 1: byte %zu is %u, expected %u\n", i, buf[i],
                        pattern(i));
                return 1;
            }
        printf("outside: rank 1 got %d bytes by DMA at %.3f us (simulated)\n", BYTES,
               p2_wtime() * 1e6);
    }
    CHECK(p2_exchange_barrier());
    CHECK(tcaDestroyHandle(&mine));
    CHECK(tcaFree(buf, tcaMemoryCPU));
    CHECK(tcaFinalize());
    return 0;
}
