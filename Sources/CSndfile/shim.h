#ifndef SPECTRUM_CSNDFILE_SHIM_H
#define SPECTRUM_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
