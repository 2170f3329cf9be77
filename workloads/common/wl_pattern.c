#include "wl_pattern.h"

#define PATTERN_SEED_STEP 31u
#define PATTERN_INDEX_STEP 7u
#define PATTERN_BASE 1u

static uint8_t pattern_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(seed * PATTERN_SEED_STEP + i * PATTERN_INDEX_STEP + PATTERN_BASE);
}

void wl_pattern_fill(uint8_t *bytes, size_t size, uint64_t seed)
{
    for (size_t i = 0; i < size; i++)
        bytes[i] = pattern_byte(seed, i);
}

uint64_t wl_pattern_count_wrong(const uint8_t *bytes, size_t size, uint64_t seed)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < size; i++)
        wrong += bytes[i] != pattern_byte(seed, i);
    return wrong;
}
