// RUN: attn-translate --attn-to-msl %s | FileCheck %s

// slot_mapping is i64: `ulong` in a buffer, which SPIRV-Cross emits from
// MSL 2.3 on.
// CHECK-LABEL: // kernel f16_reshape_and_cache launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4],"entry_point":"f16_reshape_and_cache","msl_version":"2.3","subgroup_size":32,"workgroup_size":[32,1,1]}
// CHECK: ulong _m0[1];
// CHECK: kernel void f16_reshape_and_cache(device {{.*}} {{\[\[}}buffer(0)]], device {{.*}} {{\[\[}}buffer(1)]], device {{.*}} {{\[\[}}buffer(2)]], device {{.*}} {{\[\[}}buffer(3)]], device {{.*}} {{\[\[}}buffer(4)]],
// The slot stays a ulong until it is compared with the cache's slot count,
// so every negative slot (-2^32 + 5 too) is padding.
// CHECK: ulong [[SLOT:_[0-9]+]] = f16_reshape_and_cache_arg_2._m0[gl_WorkGroupID.x];
// CHECK: if ([[SLOT]] < ulong(
// CHECK-NOT: simd_

// CHECK-LABEL: // kernel bf16_hnd_reshape_and_cache launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4],"entry_point":"bf16_hnd_reshape_and_cache","msl_version":"2.3"
// CHECK: kernel void bf16_hnd_reshape_and_cache(

func.func @f16(%k: tensor<?x4x64xf16>, %v: tensor<?x4x64xf16>,
               %s: tensor<?xi64>, %c: tensor<?x2x16x4x64xf16>)
    -> tensor<?x2x16x4x64xf16> {
  %n = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x4x64xf16>, tensor<?x4x64xf16>, tensor<?xi64>,
        tensor<?x2x16x4x64xf16> -> tensor<?x2x16x4x64xf16>
  return %n : tensor<?x2x16x4x64xf16>
}

func.func @bf16_hnd(%k: tensor<?x4x64xbf16>, %v: tensor<?x4x64xbf16>,
                    %s: tensor<?xi64>, %c: tensor<?x2x4x16x64xbf16>)
    -> tensor<?x2x4x16x64xbf16> {
  %n = attn.reshape_and_cache %k, %v, %s outs(%c) layout(hnd)
      : tensor<?x4x64xbf16>, tensor<?x4x64xbf16>, tensor<?xi64>,
        tensor<?x2x4x16x64xbf16> -> tensor<?x2x4x16x64xbf16>
  return %n : tensor<?x2x4x16x64xbf16>
}
