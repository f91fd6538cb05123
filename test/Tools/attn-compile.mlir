// attn-compile --emit=mlir builds one verified function per variant, with
// dynamic batch sizes and static shapes. (Every Reference test parses and
// verifies such output again in attn-run.)

// RUN: attn-compile --emit=mlir --variant op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,block_size=16,dtype=bf16 | FileCheck %s --check-prefix=PA
// PA-LABEL: func.func @paged_attention
// PA-SAME: (%[[Q:.*]]: tensor<?x32x128xbf16>, %[[CACHE:.*]]: tensor<?x2x16x8x128xbf16>, %[[BT:.*]]: tensor<?x?xi32>, %[[LENS:.*]]: tensor<?xi32>, %[[QSL:.*]]: tensor<?xi32>)
// PA-SAME: -> (tensor<?x32x128xbf16>, tensor<?x32xf32>)
// PA: %[[MD:.*]] = attn.metadata query_start_loc(%[[QSL]]) seq_lens(%[[LENS]]) block_table(%[[BT]])
// PA: %[[T:.*]] = tensor.dim %[[Q]], %{{.*}}
// PA: %[[O:.*]] = tensor.empty(%[[T]]) : tensor<?x32x128xbf16>
// PA: %[[L:.*]] = tensor.empty(%[[T]]) : tensor<?x32xf32>
// PA: %[[R:.*]]:2 = attn.paged_attention %[[Q]], %[[CACHE]], %[[MD]] outs(%[[O]], %[[L]]) layout(nhd) scale(0.0883883461)
// PA: return %[[R]]#0, %[[R]]#1

// RUN: attn-compile --emit=mlir --variant op=paged_attention,num_heads=8,num_kv_heads=2,head_size=64,block_size=32,dtype=f16,layout=hnd,causal=false,window_left=128,window_right=4,soft_cap=50,alibi=true,sinks=true,scale=0.5 -o %t.mlir
// RUN: FileCheck %s --check-prefix=KNOBS < %t.mlir
// KNOBS-LABEL: func.func @paged_attention
// KNOBS-SAME: tensor<?x2x2x32x64xf16>
// KNOBS-SAME: %[[ALIBI:[^:]*]]: tensor<8xf32>, %[[SINKS:[^:]*]]: tensor<8xf32>)
// KNOBS: attn.metadata {{.*}} {causal = false}
// KNOBS: attn.paged_attention {{.*}} alibi(%[[ALIBI]] : tensor<8xf32>) sinks(%[[SINKS]] : tensor<8xf32>) {{.*}} layout(hnd) scale(5.000000e-01) window_left(128) window_right(4) soft_cap(5.000000e+01)

// RUN: attn-compile --emit=mlir --variant op=reshape_and_cache,num_kv_heads=8,head_size=128,block_size=16,dtype=f16 | FileCheck %s --check-prefix=RC
// RC-LABEL: func.func @reshape_and_cache
// RC-SAME: (%[[K:.*]]: tensor<?x8x128xf16>, %[[V:.*]]: tensor<?x8x128xf16>, %[[C:.*]]: tensor<?x2x16x8x128xf16>, %[[S:.*]]: tensor<?xi64>) -> tensor<?x2x16x8x128xf16>
// RC: %[[N:.*]] = attn.reshape_and_cache %[[K]], %[[V]], %[[S]] outs(%[[C]]) layout(nhd)
// RC: return %[[N]]

// reshape_and_cache with kv_lora_rank and rope_dim writes the MLA latent cache:
// no layout, key = kv_c [T, L], value = k_pe [T, P].
// RUN: attn-compile --emit=mlir --variant op=reshape_and_cache,kv_lora_rank=512,rope_dim=64,block_size=64,dtype=bf16 | FileCheck %s --check-prefix=RCMLA
// RCMLA-LABEL: func.func @reshape_and_cache
// RCMLA-SAME: (%[[K:.*]]: tensor<?x512xbf16>, %[[V:.*]]: tensor<?x64xbf16>, %[[C:.*]]: tensor<?x64x576xbf16>, %[[S:.*]]: tensor<?xi64>) -> tensor<?x64x576xbf16>
// RCMLA: %[[N:.*]] = attn.reshape_and_cache %[[K]], %[[V]], %[[S]] outs(%[[C]]) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
// RCMLA: return %[[N]]

// DeepSeek-V3's latent attention, with scale 1/sqrt(512 + 64) by default.
// RUN: attn-compile --emit=mlir --variant op=mla_decode,num_heads=128,block_size=64,dtype=bf16,kv_lora_rank=512,rope_dim=64,num_kv_splits=4 | FileCheck %s --check-prefix=MLA
// MLA-LABEL: func.func @mla_decode
// MLA-SAME: (%{{.*}}: tensor<?x128x576xbf16>, %{{.*}}: tensor<?x64x576xbf16>, %{{.*}}: tensor<?x?xi32>, %{{.*}}: tensor<?xi32>) -> (tensor<?x128x512xbf16>, tensor<?x128xf32>)
// MLA: attn.mla_decode {{.*}} kv_lora_rank(512) scale(0.0416666679) num_kv_splits(4)

// RUN: attn-compile --emit=mlir --variant op=merge_states,num_heads=32,head_size=128,dtype=f32 | FileCheck %s --check-prefix=MS
// MS-LABEL: func.func @merge_states
// MS-SAME: (%{{.*}}: tensor<?x32x128xf32>, %{{.*}}: tensor<?x32xf32>, %{{.*}}: tensor<?x32x128xf32>, %{{.*}}: tensor<?x32xf32>) -> (tensor<?x32x128xf32>, tensor<?x32xf32>)
// MS: attn.merge_states

// --help lists every key with its default and the ops it applies to.
// RUN: attn-compile --help | FileCheck %s --check-prefix=HELP
// HELP: Variant keys (default) and the ops they apply to:
// HELP-NEXT: op            paged_attention | reshape_and_cache | mla_decode | merge_states
// HELP-NEXT: num_heads     query heads H (32); for paged_attention, mla_decode, merge_states
// HELP: kv_lora_rank  latent size L (512); reshape_and_cache given kv_lora_rank and rope_dim writes the MLA latent cache [NB, B, L + P] from kv_c [T, L] and k_pe [T, P]; for reshape_and_cache, mla_decode
// HELP: num_kv_splits split-KV chunks per request (1); for mla_decode
// HELP: --emit=<value>
// HELP: =spirv {{.*}}SPIR-V
