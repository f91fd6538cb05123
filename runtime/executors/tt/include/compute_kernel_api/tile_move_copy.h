// Emulated TT-Metalium compute API header (see attn_tt_api.h).
#pragma once
#include "compute_kernel_api.h"
