//===- TestDataflowKernels.cpp - Data movement kernels for the tests -----===//
#include "test/unit/tt/TestKernels.h"

#include "api/dataflow/dataflow_api.h"

namespace attn::tt::test {

void streamReader() {
  const InterleavedAddrGen<true> s = {get_arg_val<uint32_t>(0),
                                      kStreamPageSize};
  for (uint32_t p = 0; p < kStreamPages; ++p) {
    cb_reserve_back(0, 1);
    noc_async_read(get_noc_addr(p, s), get_write_ptr(0), kStreamPageSize);
    noc_async_read_barrier();
    cb_push_back(0, 1);
  }
}

void streamWriter() {
  const InterleavedAddrGen<true> d = {get_arg_val<uint32_t>(1),
                                      kStreamPageSize};
  for (uint32_t p = 0; p < kStreamPages; ++p) {
    cb_wait_front(0, 1);
    noc_async_write(get_read_ptr(0), get_noc_addr(p, d), kStreamPageSize);
    noc_async_write_barrier();
    cb_pop_front(0, 1);
  }
}

static constexpr uint32_t face(uint32_t r, uint32_t c) {
  return ((r / 16) * 2 + c / 16) * 256 + (r % 16) * 16 + c % 16;
}

void fillTwoTilesReader() {
  cb_reserve_back(0, 2);
  auto *a = reinterpret_cast<float *>(uintptr_t(get_write_ptr(0)));
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      a[face(r, c)] = r == c ? 2.0f : 0.0f;        // 2 I
      a[1024 + face(r, c)] = float(r) + c / 8.0f; // B
    }
  cb_push_back(0, 2);
  cb_reserve_back(1, 1);
  auto *s = reinterpret_cast<float *>(uintptr_t(get_write_ptr(1)));
  for (uint32_t i = 0; i < 1024; ++i)
    s[i] = 1.0f;
  cb_push_back(1, 1);
}

void writeTwoTilesWriter() {
  const InterleavedAddrGen<true> d = {get_arg_val<uint32_t>(0), 2048};
  cb_wait_front(16, 1);
  noc_async_write(get_read_ptr(16), get_noc_addr(0, d), 2048);
  cb_wait_front(17, 1);
  noc_async_write(get_read_ptr(17), get_noc_addr(1, d), 2048);
  noc_async_write_barrier();
}

void readPastBankReader() {
  const InterleavedAddrGen<true> s = {get_arg_val<uint32_t>(0), 64};
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(5000, s), get_write_ptr(0), 64);
}

void waitOnUnconfigured() { cb_wait_front(9, 1); }

void readAtOffsetReader() {
  uint32_t base = get_arg_val<uint32_t>(0);
  uint32_t offset = get_arg_val<uint32_t>(1);
  uint32_t size = get_arg_val<uint32_t>(2);
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, base + offset),
                 get_write_ptr(0), size);
  noc_async_read_barrier();
}

void writeAtOffsetWriter() {
  uint32_t base = get_arg_val<uint32_t>(0);
  uint32_t l1Offset = get_arg_val<uint32_t>(1);
  uint32_t dramOffset = get_arg_val<uint32_t>(2);
  cb_reserve_back(0, 1);
  noc_async_write(get_write_ptr(0) + l1Offset,
                  get_noc_addr_from_bank_id<true>(0, base + dramOffset), 4);
  noc_async_write_barrier();
}

void pushThreeIntoTwo() {
  for (int i = 0; i < 3; ++i) {
    cb_reserve_back(0, 1);
    cb_push_back(0, 1);
  }
}

void writerWaitsForCompute() { cb_wait_front(16, 1); }

} // namespace attn::tt::test
