// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="subgroup-size=16" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s -split-input-file \
// RUN:   --convert-attn-to-gpu="subgroup-size=16 split-kv=4" \
// RUN:   | FileCheck %s --check-prefix=SPLIT

// Visibility is an interval of key positions: each knob narrows one end of
// the loop over keys, so a knob that is off leaves no compare behind.

// Non-causal, no window: the keys are [0, seq_len), nothing is clipped.
// CHECK-LABEL: gpu.func @full_paged_attention
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: scf.while
// CHECK: memref.load %arg3
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: scf.for
// CHECK-NOT: math.tanh
// CHECK-NOT: arith.sitofp
// CHECK: gpu.return
func.func @full(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                %qsl: memref<?xi32>, %lens: memref<?xi32>,
                %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
                %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      {causal = false} : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// Sliding window, causal: j >= p - window_left clips the start, taken only
// where p > window_left (a compare, not maxsi of a difference that may leave
// i32), causality the end (minsi). The loop counts offsets from the start
// up to hi - lo (a key j0 + step would wrap past 2^31 - 1), and a key is
// the start plus its offset.
// CHECK-LABEL: gpu.func @window_paged_attention
// CHECK: %[[LENI:.*]] = memref.load %arg3[
// CHECK: %[[LEN:.*]] = arith.index_cast %[[LENI]]
// CHECK: %[[POS:.*]] = arith.addi
// CHECK: %[[P1:.*]] = arith.addi %[[POS]], %c1
// CHECK: %[[HI:.*]] = arith.minsi %[[LEN]], %[[P1]]
// CHECK: %[[LO:.*]] = arith.subi %[[POS]], %c7
// CHECK: %[[IN:.*]] = arith.cmpi sgt, %[[POS]], %c7
// CHECK: %[[START:.*]] = arith.select %[[IN]], %[[LO]], %c0
// CHECK-NOT: arith.maxsi
// CHECK: %[[N:.*]] = arith.subi %[[HI]], %[[START]]
// CHECK: scf.for %[[O:.*]] = %c0 to %[[N]] step
// CHECK: arith.addi %[[START]], %{{.*}} : index
func.func @window(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                  %qsl: memref<?xi32>, %lens: memref<?xi32>,
                  %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
                  %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      window_left(7)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// Non-causal with window_right: only the end is clipped, at p + wr + 1
// where that is below seq_len, found by comparing wr with the keys after p
// (seq_len - 1 - p, at most q_len) so that no sum leaves i32.
// CHECK-LABEL: gpu.func @right_paged_attention
// CHECK: %[[LENI:.*]] = memref.load %arg3[
// CHECK: %[[LEN:.*]] = arith.index_cast %[[LENI]]
// CHECK-NOT: arith.maxsi
// CHECK: %[[POS:.*]] = arith.addi
// CHECK: %[[REST:.*]] = arith.subi %[[LEN]], %[[POS]]
// CHECK: %[[AFTER:.*]] = arith.subi %[[REST]], %c1
// CHECK: %[[HI:.*]] = arith.addi %[[POS]], %c4
// CHECK: %[[IN:.*]] = arith.cmpi sgt, %[[AFTER]], %c3
// CHECK: arith.select %[[IN]], %[[HI]], %[[LEN]]
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: scf.for
func.func @right(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                 %qsl: memref<?xi32>, %lens: memref<?xi32>,
                 %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
                 %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      {causal = false} : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      window_right(3)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// Both windows at their limit, 2^31 - 1, over negative positions
// (cross-attention): p - wl and p + wr + 1 leave i32, which SPIR-V's index
// is; each end is chosen by a compare with the window itself, so the rows
// see every key (issue 34: Vulkan returned out 0, lse -inf).
// CHECK-LABEL: gpu.func @max_windows_paged_attention
// CHECK-DAG: %[[MAX:.*]] = arith.constant 2147483647 : index
// CHECK: %[[LENI:.*]] = memref.load %arg3[
// CHECK: %[[LEN:.*]] = arith.index_cast %[[LENI]]
// CHECK: %[[POS:.*]] = arith.addi
// CHECK: %[[LO:.*]] = arith.subi %[[POS]], %[[MAX]]
// CHECK: %[[LIN:.*]] = arith.cmpi sgt, %[[POS]], %[[MAX]]
// CHECK: arith.select %[[LIN]], %[[LO]], %c0
// CHECK: %[[REST:.*]] = arith.subi %[[LEN]], %[[POS]]
// CHECK: %[[AFTER:.*]] = arith.subi %[[REST]], %c1
// CHECK: %[[HIN:.*]] = arith.cmpi sgt, %[[AFTER]], %[[MAX]]
// CHECK: arith.select %[[HIN]], %{{.*}}, %[[LEN]]
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: scf.for
func.func @max_windows(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                       %qsl: memref<?xi32>, %lens: memref<?xi32>,
                       %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
                       %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      {causal = false} : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      window_left(2147483647) window_right(2147483647)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// The soft cap, then ALiBi (FlashAttention-2's order): the slope
// (argument 5) is read per head, the distance j - p enters as a float,
// subtracted as integers first (f32(j) - f32(p) loses it past 2^24);
// cap * tanh(s / cap) in log2 units (its exp2), then the capped score plus
// slope * -|j - p|, one fma.
// CHECK-LABEL: gpu.func @alibi_cap_paged_attention
// CHECK-SAME: %[[ALIBI:arg5]]: memref<?xf32>
// CHECK: memref.load %[[ALIBI]]
// CHECK: scf.for
// CHECK: %[[D:.*]] = arith.subi
// CHECK-NEXT: %[[DI:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK-NEXT: %[[DIST:.*]] = arith.sitofp %[[DI]]
// CHECK-NOT: arith.subf
// CHECK: gpu.shuffle
// CHECK: math.exp2
// CHECK: %[[ABS:.*]] = math.absf %[[DIST]]
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ABS]]
// CHECK-NEXT: math.fma %{{.*}}, %[[NEG]], %{{.*}} : f32
func.func @alibi_cap(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                     %qsl: memref<?xi32>, %lens: memref<?xi32>,
                     %bt: memref<?x?xi32>, %slopes: memref<4xf32>,
                     %o: memref<?x4x32xf32>, %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md alibi(%slopes : memref<4xf32>)
      outs(%o, %l) layout(nhd) scale(0.5) soft_cap(30.0)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// Sinks join the denominator once, when the subgroups' results merge
// after the loop over keys (in natural units there, as lses are).
// CHECK-LABEL: gpu.func @sinks_paged_attention
// CHECK-SAME: %[[SINKS:arg5]]: memref<?xf32>
// CHECK-NOT: memref.load %[[SINKS]]
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: memref.load %[[SINKS]]
// CHECK: arith.maximumf
// CHECK: math.exp
//
// Split-KV: the partial kernel gets no sinks; its grid's z is the split and
// it writes f32 scratch; the reduce kernel adds the sinks.
// SPLIT-LABEL: func.func @sinks
// SPLIT: %[[PO:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// SPLIT: %[[PL:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// SPLIT: gpu.launch_func @sinks_paged_attention_partial::@sinks_paged_attention_partial blocks in (%{{.*}}, %c1{{[_0-9]*}}, %c4{{[_0-9]*}})
// SPLIT-SAME: %[[PO]] : memref<?xf32>, %[[PL]] : memref<?xf32>
// SPLIT: gpu.launch_func @sinks_paged_attention_reduce::@sinks_paged_attention_reduce blocks in (%{{.*}}, %c4{{[_0-9]*}}, %c1{{[_0-9]*}})
// SPLIT-SAME: args(%[[PO]] : memref<?xf32>, %[[PL]] : memref<?xf32>, %{{.*}} : memref<?xf32>,
// SPLIT: memref.dealloc %[[PO]]
// SPLIT: memref.dealloc %[[PL]]
// SPLIT: gpu.func @sinks_paged_attention_partial
// SPLIT-SAME: attn.params = ["num_tokens", "num_reqs", "max_blocks_per_req", "num_blocks"]
// SPLIT: gpu.block_id z
// SPLIT: gpu.func @sinks_paged_attention_reduce
// SPLIT-SAME: attn.op = "split_kv_reduce", attn.params = ["num_rows", "num_reqs"]
// The tiled prefill kernel writes the rows of the longer requests, so the
// reduce merges decode rows only: it finds the row's request and compares
// its query length with the threshold.
// SPLIT: scf.while
// SPLIT: %[[DECODE:.*]] = arith.cmpi sle, %{{.*}}, %c1 : index
// SPLIT: scf.if %[[DECODE]]
// SPLIT-COUNT-4: math.exp
// The tiled kernel never splits: it takes the sinks itself (argument 5).
// SPLIT: gpu.func @sinks_paged_attention_prefill(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %[[PSINKS:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi32>)
// SPLIT: memref.load %[[PSINKS]]
func.func @sinks(%q: memref<?x4x32xf32>, %c: memref<?x2x16x1x32xf32>,
                 %qsl: memref<?xi32>, %lens: memref<?xi32>,
                 %bt: memref<?x?xi32>, %sinks: memref<4xf32>,
                 %o: memref<?x4x32xf32>, %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md sinks(%sinks : memref<4xf32>)
      outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x4x32xf32>, memref<?x2x16x1x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

// HND: a kv head's rows of a block are contiguous, so the key row is
// ((block * 2 + 0) * G + g) * B + offset, i.e. (block * 8 + g) * 16 + offset
// with G = 4 and B = 16.
// CHECK-LABEL: gpu.func @hnd_paged_attention
// CHECK: scf.for
// CHECK: %[[OFF:.*]] = arith.remui %{{.*}}, %c16
// CHECK: %[[BG:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[BGH:.*]] = arith.addi %[[BG]], %block_id_y
// CHECK: %[[ROW:.*]] = arith.muli %[[BGH]], %c16
// CHECK: arith.addi %[[ROW]], %[[OFF]]
func.func @hnd(%q: memref<?x4x32xf32>, %c: memref<?x2x4x16x32xf32>,
               %qsl: memref<?xi32>, %lens: memref<?xi32>,
               %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
               %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(hnd) scale(0.5)
      : memref<?x4x32xf32>, memref<?x2x4x16x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}
