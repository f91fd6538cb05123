// Functions written by hand: several attn ops chained through their
// destinations, constants, and what the interpreter refuses.

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile --emit=mlir --variant op=reshape_and_cache,num_kv_heads=2,head_size=16,block_size=16,dtype=f32 -o %t/rc.mlir
// RUN: attn-compile --emit=mlir --variant op=paged_attention,num_heads=4,num_kv_heads=2,head_size=16,block_size=16,dtype=f32 -o %t/pa.mlir

// One serving step: the new keys and values go into the cache, then
// attention reads it. Running the two variants one after the other on the
// same inputs gives the same bits.
// RUN: attn-run %s --entry step --random 4 --outputs %t/step | FileCheck %s --check-prefix=STEP
// STEP: result0: [{{[0-9]+}}, 4, 16] f32
// STEP-NEXT: result1: [{{[0-9]+}}, 4] f32
// STEP-NEXT: result2: [{{[0-9]+}}, 2, 16, 2, 16] f32
// RUN: mkdir -p %t/rc %t/pa
// RUN: cp %t/step/arg1.npy %t/rc/arg0.npy
// RUN: cp %t/step/arg2.npy %t/rc/arg1.npy
// RUN: cp %t/step/arg3.npy %t/rc/arg2.npy
// RUN: cp %t/step/arg7.npy %t/rc/arg3.npy
// RUN: attn-run %t/rc.mlir --inputs %t/rc --outputs %t/rc > /dev/null
// RUN: cmp %t/rc/result0.npy %t/step/result2.npy
// RUN: cp %t/step/arg0.npy %t/pa/arg0.npy
// RUN: cp %t/rc/result0.npy %t/pa/arg1.npy
// RUN: cp %t/step/arg4.npy %t/pa/arg2.npy
// RUN: cp %t/step/arg5.npy %t/pa/arg3.npy
// RUN: cp %t/step/arg6.npy %t/pa/arg4.npy
// RUN: attn-run %t/pa.mlir --inputs %t/pa --outputs %t/pa > /dev/null
// RUN: cmp %t/pa/result0.npy %t/step/result0.npy
// RUN: cmp %t/pa/result1.npy %t/step/result1.npy

func.func @step(%query: tensor<?x4x16xf32>, %key: tensor<?x2x16xf32>,
                %value: tensor<?x2x16xf32>, %cache: tensor<?x2x16x2x16xf32>,
                %table: tensor<?x?xi32>, %lens: tensor<?xi32>,
                %qsl: tensor<?xi32>, %slots: tensor<?xi64>)
    -> (tensor<?x4x16xf32>, tensor<?x4xf32>, tensor<?x2x16x2x16xf32>) {
  %new = attn.reshape_and_cache %key, %value, %slots outs(%cache) layout(nhd)
      : tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi64>,
        tensor<?x2x16x2x16xf32> -> tensor<?x2x16x2x16xf32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens)
      block_table(%table) slot_mapping(%slots : tensor<?xi64>)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %c0 = arith.constant 0 : index
  %t = tensor.dim %query, %c0 : tensor<?x4x16xf32>
  %o = tensor.empty(%t) : tensor<?x4x16xf32>
  %l = tensor.empty(%t) : tensor<?x4xf32>
  %out, %lse = attn.paged_attention %query, %new, %md outs(%o, %l)
      layout(nhd) scale(0.25)
      : tensor<?x4x16xf32>, tensor<?x2x16x2x16xf32>, tensor<?x4x16xf32>,
        tensor<?x4xf32> -> tensor<?x4x16xf32>, tensor<?x4xf32>
  return %out, %lse, %new
      : tensor<?x4x16xf32>, tensor<?x4xf32>, tensor<?x2x16x2x16xf32>
}

// ALiBi slopes from a dense constant equal to the generator's: the same bits
// as the variant that takes them as an argument.
// RUN: attn-compile --emit=mlir --variant op=paged_attention,num_heads=4,num_kv_heads=2,head_size=16,block_size=16,dtype=f32,alibi=1 -o %t/alibi.mlir
// RUN: attn-run %t/alibi.mlir --random 9 --outputs %t/alibi-arg > /dev/null
// RUN: attn-run %s --entry alibi_constant --random 9 --outputs %t/alibi-const > /dev/null
// RUN: cmp %t/alibi-arg/result0.npy %t/alibi-const/result0.npy
// RUN: cmp %t/alibi-arg/result1.npy %t/alibi-const/result1.npy

func.func @alibi_constant(%query: tensor<?x4x16xf32>,
                          %cache: tensor<?x2x16x2x16xf32>,
                          %table: tensor<?x?xi32>, %lens: tensor<?xi32>,
                          %qsl: tensor<?xi32>)
    -> (tensor<?x4x16xf32>, tensor<?x4xf32>) {
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]>
      : tensor<4xf32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens)
      block_table(%table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %c0 = arith.constant 0 : index
  %t = tensor.dim %query, %c0 : tensor<?x4x16xf32>
  %o = tensor.empty(%t) : tensor<?x4x16xf32>
  %l = tensor.empty(%t) : tensor<?x4xf32>
  %out, %lse = attn.paged_attention %query, %cache, %md
      alibi(%slopes : tensor<4xf32>) outs(%o, %l) layout(nhd) scale(0.25)
      : tensor<?x4x16xf32>, tensor<?x2x16x2x16xf32>, tensor<?x4x16xf32>,
        tensor<?x4xf32> -> tensor<?x4x16xf32>, tensor<?x4xf32>
  return %out, %lse : tensor<?x4x16xf32>, tensor<?x4xf32>
}

// An op the interpreter does not know is an error at its location.
// RUN: not attn-run %s --entry unsupported --random 0 2>&1 | FileCheck %s --check-prefix=OPUNKNOWN

func.func @unsupported(%a: tensor<?x4x16xf32>, %la: tensor<?x4xf32>,
                       %b: tensor<?x4x16xf32>, %lb: tensor<?x4xf32>)
    -> tensor<?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %a, %c0 : tensor<?x4x16xf32>
  %o = tensor.empty(%t) : tensor<?x4x16xf32>
  %l = tensor.empty(%t) : tensor<?x4xf32>
  %out, %lse = attn.merge_states %a, %la, %b, %lb outs(%o, %l)
      : tensor<?x4x16xf32>, tensor<?x4xf32>, tensor<?x4x16xf32>,
        tensor<?x4xf32>, tensor<?x4x16xf32>, tensor<?x4xf32>
      -> tensor<?x4x16xf32>, tensor<?x4xf32>
  // OPUNKNOWN: attn-run: error: {{.*}}interpreter.mlir:[[@LINE+1]]:{{[0-9]+}}: 'arith.addf': op is not supported by the reference interpreter
  %sum = arith.addf %out, %out : tensor<?x4x16xf32>
  return %sum : tensor<?x4x16xf32>
}

// --random cannot make a value for an argument no attn op uses.
// RUN: not attn-run %s --entry unused_argument --random 0 2>&1 | FileCheck %s --check-prefix=UNUSED
// UNUSED: attn-run: error: argument #4 of @unused_argument is not an operand of an attn op, so --random cannot make a value for it; pass --inputs DIR instead

func.func @unused_argument(%a: tensor<?x4x16xf32>, %la: tensor<?x4xf32>,
                           %b: tensor<?x4x16xf32>, %lb: tensor<?x4xf32>,
                           %x: tensor<3xf32>) -> tensor<?x4x16xf32> {
  %out, %lse = attn.merge_states %a, %la, %b, %lb outs(%a, %la)
      : tensor<?x4x16xf32>, tensor<?x4xf32>, tensor<?x4x16xf32>,
        tensor<?x4xf32>, tensor<?x4x16xf32>, tensor<?x4xf32>
      -> tensor<?x4x16xf32>, tensor<?x4xf32>
  return %out : tensor<?x4x16xf32>
}

// Without --entry the module must hold a single function.
// RUN: not attn-run %s --random 0 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: attn-run: error: {{.*}}interpreter.mlir has several functions (@step, @alibi_constant, @unsupported, @unused_argument, @fixed_batch, @on_memrefs); pick one with --entry
// RUN: not attn-run %s --entry nope --random 0 2>&1 | FileCheck %s --check-prefix=NOPE
// NOPE: attn-run: error: no function @nope in {{.*}}interpreter.mlir

// A batch fixed by dense integer constants, on inputs made by NumPy; the
// oracle gets the constants as the arguments of the equivalent variant.
// RUN: mkdir -p %t/fixed
// RUN: %numpy_python -c "import numpy as np, sys; r = np.random.default_rng(0); np.save(sys.argv[1] + '/arg0.npy', r.uniform(-1, 1, (3, 2, 4)).astype(np.float32)); np.save(sys.argv[1] + '/arg1.npy', r.uniform(-1, 1, (3, 2, 4, 1, 4)).astype(np.float32))" %t/fixed
// RUN: attn-run %s --entry fixed_batch --inputs %t/fixed --outputs %t/fixed | FileCheck %s --check-prefix=FIXED
// FIXED: result0: [3, 2, 4] f32
// FIXED-NEXT: result1: [3, 2] f32
// RUN: %numpy_python -c "import numpy as np, sys; np.save(sys.argv[1] + '/arg2.npy', np.array([[2, 0], [1, 1]], np.int32)); np.save(sys.argv[1] + '/arg3.npy', np.array([5, 2], np.int32)); np.save(sys.argv[1] + '/arg4.npy', np.array([0, 1, 3], np.int32))" %t/fixed
// RUN: %numpy_python %S/Inputs/oracle.py --variant op=paged_attention,num_heads=2,num_kv_heads=1,head_size=4,block_size=4,dtype=f32,scale=0.5 %t/fixed

func.func @fixed_batch(%query: tensor<3x2x4xf32>, %cache: tensor<3x2x4x1x4xf32>)
    -> (tensor<3x2x4xf32>, tensor<3x2xf32>) {
  %table = arith.constant dense<[[2, 0], [1, 1]]> : tensor<2x2xi32>
  %lens = arith.constant dense<[5, 2]> : tensor<2xi32>
  %qsl = arith.constant dense<[0, 1, 3]> : tensor<3xi32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens)
      block_table(%table) : tensor<3xi32>, tensor<2xi32>, tensor<2x2xi32>
  %o = tensor.empty() : tensor<3x2x4xf32>
  %l = tensor.empty() : tensor<3x2xf32>
  %out, %lse = attn.paged_attention %query, %cache, %md outs(%o, %l)
      layout(nhd) scale(0.5)
      : tensor<3x2x4xf32>, tensor<3x2x4x1x4xf32>, tensor<3x2x4xf32>,
        tensor<3x2xf32> -> tensor<3x2x4xf32>, tensor<3x2xf32>
  return %out, %lse : tensor<3x2x4xf32>, tensor<3x2xf32>
}

// Bufferized functions are not interpreted.
// RUN: not attn-run %s --entry on_memrefs --random 0 2>&1 | FileCheck %s --check-prefix=MEMREF
// MEMREF: attn-run: error: argument #0 of @on_memrefs has type memref<4x2xf32>; only ranked tensors of f32, f16, bf16, f8E4M3FN, f8E5M2, i32 or i64 are supported

func.func @on_memrefs(%a: memref<4x2xf32>) {
  return
}
