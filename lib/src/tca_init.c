/*
 * tca_init.c - tcaInit, apart from the rest so that code which never opens
 * the real device (unit tests with a fake one) need not link the backend.
 */
#include "tca_internal.h"

tcaresult tcaInit(void)
{
    P2_API_CALL();
    if (tca_dev())
        return TCA_SUCCESS;
    p2_dev *dev = p2_device_get("peach2");
    if (!dev)
        return TCA_ERROR_DEVICE;
    return tca_lib_attach(dev);
}
