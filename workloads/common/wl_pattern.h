/*
 * wl_pattern.h - the data workloads send and check: byte i of message `seed`.
 * The seed step is odd, so consecutive messages (or different senders) differ
 * in every byte and a stale or misdirected buffer is caught; the index step
 * makes neighbouring bytes differ, so a shifted copy is caught; and no byte of
 * seed 0 is zero at i = 0, so an untouched zeroed buffer never passes.
 */
#ifndef WL_PATTERN_H
#define WL_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* In emulation GPU memory is host memory, so the CPU fills and checks it
 * directly; on a real GPU these would go through cudaMemcpy. */
void wl_pattern_fill(uint8_t *bytes, size_t size, uint64_t seed);
/* Bytes that differ from the pattern. */
uint64_t wl_pattern_count_wrong(const uint8_t *bytes, size_t size, uint64_t seed);

#endif
