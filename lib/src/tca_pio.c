/*
 * tca_pio.c - PIO: CPU stores through the board's PIO window (BAR2).
 *
 * The window reaches the first P2_PIO_NODE_SPAN bytes of every node's host
 * memory; a tcaPIOHandle records where in the window its region lies, so a
 * send is one bounds check and one pio_write.
 */
#include "tca_internal.h"

tcaresult tcaSetPIORegion(tcaPIOHandle *pio_handle, const tcaHandle *remote_handle,
                          size_t offset, size_t size)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!pio_handle || !remote_handle || size == 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    tcaresult r;
    if ((r = tca_handle_validate(remote_handle, dev->nnodes)) != TCA_SUCCESS ||
        (r = tca_handle_range(remote_handle, offset, size)) != TCA_SUCCESS ||
        (r = tca_node_reachable(dev, remote_handle->node, "PIO")) != TCA_SUCCESS)
        return r;
    if (remote_handle->kind != tcaMemoryCPU)
        return TCA_ERROR_NOT_SUPPORTED;
    /* Valid host handles lie in the host window, so this cannot wrap. */
    uint64_t host_off = p2_addr_offset(remote_handle->pcie_addr) - P2_HOST_OFFSET + offset;
    if (host_off > P2_PIO_NODE_SPAN || size > P2_PIO_NODE_SPAN - host_off)
        return TCA_ERROR_PIO_RANGE;
    tcaPIOHandle pio = {.window_offset = p2_pio_offset(remote_handle->node, host_off),
                        .size = size,
                        .node = remote_handle->node};
    pio.check = tca_pio_check_word(&pio);
    *pio_handle = pio;
    return TCA_SUCCESS;
}

tcaresult tcaSendPIO(const tcaPIOHandle *pio_handle, size_t offset, const void *src, size_t size)
{
    P2_API_CALL();
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!pio_handle || !src || size == 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (pio_handle->check == 0 || pio_handle->check != tca_pio_check_word(pio_handle) ||
        pio_handle->node >= dev->nnodes)
        return TCA_ERROR_INVALID_HANDLE;
    if (offset > pio_handle->size || size > pio_handle->size - offset)
        return TCA_ERROR_OUT_OF_RANGE;
    if (!dev->ops->bar_write)
        return TCA_ERROR_NOT_SUPPORTED;
    dev->ops->bar_write(dev, P2_BAR_PIO, pio_handle->window_offset + offset, src, size);
    return TCA_SUCCESS;
}

tcaresult tcaSendPIOCommit(void)
{
    P2_API_CALL();
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!dev->ops->bar_flush)
        return TCA_ERROR_NOT_SUPPORTED;
    dev->ops->bar_flush(dev);
    return TCA_SUCCESS;
}
