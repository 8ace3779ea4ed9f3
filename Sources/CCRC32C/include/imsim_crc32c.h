#ifndef IMSIM_CRC32C_H
#define IMSIM_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has a CRC-32C instruction (x86-64 SSE4.2, AArch64 CRC32), else 0.
int imsim_crc32c_hardware(void);

/// Continues a CRC-32C over `n` bytes with the CPU instruction. `crc` is the raw register
/// (already inverted: pass ~previous and invert the result). Only call when
/// `imsim_crc32c_hardware()` returned 1.
uint32_t imsim_crc32c_hw_update(uint32_t crc, const void *bytes, size_t n);

#endif
