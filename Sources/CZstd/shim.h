#ifndef IMSIM_CZSTD_SHIM_H
#define IMSIM_CZSTD_SHIM_H
#include <zstd.h>
#endif
