// RUN: attn-translate --attn-to-msl %s | FileCheck %s

// No SIMD-group operation: the lowest MSL version does. The params buffer
// (argument 6) keeps its index in the launch facts, but the kernel never
// reads it (the grid gives the rows), so SPIRV-Cross leaves it out of the
// signature; the host binds it anyway, harmlessly.
// CHECK-LABEL: // kernel f32_merge_states launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6],"entry_point":"f32_merge_states","msl_version":"1.2","subgroup_size":32,"workgroup_size":[32,1,1]}
// CHECK: kernel void f32_merge_states(device {{.*}} {{\[\[}}buffer(0)]], {{.*}} {{\[\[}}buffer(5)]], uint3 {{.*}} {{\[\[}}thread_position_in_threadgroup]], uint3 {{.*}} {{\[\[}}threadgroup_position_in_grid]])
// CHECK-NOT: simd_
// CHECK: exp(

// CHECK-LABEL: // kernel bf16_merge_states launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6],"entry_point":"bf16_merge_states","msl_version":"1.2"
// CHECK: ushort _m0[1];
// CHECK: kernel void bf16_merge_states(

func.func @f32(%oa: tensor<?x8x64xf32>, %la: tensor<?x8xf32>,
               %ob: tensor<?x8x64xf32>, %lb: tensor<?x8xf32>,
               %o: tensor<?x8x64xf32>, %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xf32>, tensor<?x8xf32>) {
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x8x64xf32>, tensor<?x8xf32>, tensor<?x8x64xf32>,
        tensor<?x8xf32>, tensor<?x8x64xf32>, tensor<?x8xf32>
      -> tensor<?x8x64xf32>, tensor<?x8xf32>
  return %r#0, %r#1 : tensor<?x8x64xf32>, tensor<?x8xf32>
}

func.func @bf16(%oa: tensor<?x8x64xbf16>, %la: tensor<?x8xf32>,
                %ob: tensor<?x8x64xbf16>, %lb: tensor<?x8xf32>,
                %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xbf16>, tensor<?x8xf32>) {
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x8x64xbf16>, tensor<?x8xf32>, tensor<?x8x64xbf16>,
        tensor<?x8xf32>, tensor<?x8x64xbf16>, tensor<?x8xf32>
      -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return %r#0, %r#1 : tensor<?x8x64xbf16>, tensor<?x8xf32>
}
