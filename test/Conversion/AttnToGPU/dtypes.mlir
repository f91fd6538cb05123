// RUN: attn-opt %s --convert-attn-to-gpu="bf16-as-i16=true" | FileCheck %s --check-prefix=WORDS
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=NATIVE

// Values are computed in f32 whatever the storage type. With bf16-as-i16 the
// kernel sees i16 words: it widens them by shifting into the high half of
// an f32, and narrows with integer round-to-nearest-even (add 0x7fff plus
// the kept lsb), keeping NaN quiet. Without it, arith.extf / arith.truncf.

// WORDS-LABEL: func.func @bf16
// WORDS: arith.bitcast %{{.*}} : memref<?xbf16> to memref<?xi16>
// WORDS: gpu.func @bf16_paged_attention(%{{.*}}: memref<?xi16>, %{{.*}}: memref<?xi16>,
// WORDS-DAG: %[[C16:.*]] = arith.constant 16 : i32
// WORDS-DAG: %[[BIAS:.*]] = arith.constant 32767 : i32
// WORDS-DAG: %[[QNAN:.*]] = arith.constant 32704 : i32
// WORDS: %[[W:.*]] = memref.load %arg0
// WORDS: %[[X:.*]] = arith.extui %[[W]] : i16 to i32
// WORDS: %[[H:.*]] = arith.shli %[[X]], %[[C16]] : i32
// WORDS: arith.bitcast %[[H]] : i32 to f32
// WORDS: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// WORDS: arith.shrui %[[BITS]], %[[C16]]
// WORDS: arith.addi %{{.*}}, %[[BIAS]]
// WORDS: arith.cmpf uno
// WORDS: arith.select %{{.*}}, %[[QNAN]]
// WORDS: arith.trunci %{{.*}} : i32 to i16
// WORDS-NOT: bf16 to f32

// NATIVE-LABEL: func.func @bf16
// NATIVE-NOT: arith.bitcast
// NATIVE: gpu.func @bf16_paged_attention(%{{.*}}: memref<?xbf16>,
// NATIVE: arith.extf %{{.*}} : bf16 to f32
// NATIVE: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16(%q: memref<?x2x32xbf16>, %c: memref<?x2x16x1x32xbf16>,
                %qsl: memref<?xi32>, %lens: memref<?xi32>,
                %bt: memref<?x?xi32>, %o: memref<?x2x32xbf16>,
                %l: memref<?x2xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x2x32xbf16>, memref<?x2x16x1x32xbf16>, memref<?x2x32xbf16>,
        memref<?x2xf32>
  return
}
