#ifndef SPECTRUM_CFFTW_SHIM_H
#define SPECTRUM_CFFTW_SHIM_H
#include <fftw3.h>
#endif
