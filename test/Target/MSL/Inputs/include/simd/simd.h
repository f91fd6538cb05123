// What `#include <simd/simd.h>` finds in attn's MSL syntax check: the
// emitted kernels use nothing from it beyond metal_stdlib's vector types.
#include "../../metal_stdlib_stub.h"
