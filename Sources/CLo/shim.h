#ifndef SPECTRUM_CLO_SHIM_H
#define SPECTRUM_CLO_SHIM_H
#include <lo/lo.h>
#endif
