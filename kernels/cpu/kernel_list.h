// What every built-in CPU kernel file includes besides its op's args.h: the registry, and
// PRISM_CPU_KERNELS, with which the file registers itself (kernels/kernel_files.h).
#pragma once

#include "kernels/kernel_files.h"
#include "kernels/registry.h"
