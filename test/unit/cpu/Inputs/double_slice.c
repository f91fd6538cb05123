/* A cpu kernel (core/CpuKernel.h) for the CPU device's tests, built as a
 * shared object and loaded from its bytes. Arguments: in (f32), out (f32),
 * hits (i32), params (i32: grid x, grid y, grid z, slice). Work item
 * (x, y, z) is item x + X (y + Y z) of the grid; it doubles its slice of
 * `in` into `out` and counts each element it writes in `hits`. ATTN_TEST_ABI
 * sets the ABI version it exports; without it, it exports none. */
#include <stdint.h>

#ifdef ATTN_TEST_ABI
const uint32_t attn_cpu_abi = ATTN_TEST_ABI;
#endif

void double_slice(const int64_t *workItem, void *const *buffers,
                  const int64_t *elements) {
  const float *in = (const float *)buffers[0];
  float *out = (float *)buffers[1];
  int32_t *hits = (int32_t *)buffers[2];
  const int32_t *params = (const int32_t *)buffers[3];
  int64_t item =
      workItem[0] + params[0] * (workItem[1] + params[1] * workItem[2]);
  int64_t slice = params[3];
  for (int64_t i = item * slice; i < (item + 1) * slice; ++i) {
    if (i >= elements[0] || i >= elements[1] || i >= elements[2])
      return;
    out[i] = 2 * in[i];
    ++hits[i];
  }
}
