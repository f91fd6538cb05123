
{"format_version": 5,
"compiler": "attn-compile fuzz",
"manifest_hash": "9235986378b6db3d7de9cecf566821a96d572ff988f5164357f72f2a1979b5f9",
"signature": {"ed25519":"5ce7a2139563bfd0a8de75f2143f2471ed9ffbf830e9c75853511d992d68d35141d07c413e7d2adb84a5f98fd1d8ce186652b008d9e93e6f710c0a0da7955802","key":"8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"},
"kinds": [
 ["spirv","main",{"subgroup_size":8},""]],
"bound_shapes": [],
"bounds": [],
"kernels": [
 [0,"YbCAEMfbdbGZc05VJva0eAh6kuWLQ2zmIU8ecniDWy0",null,"./m::k","kernels/k.spv"]],
"plans": [],
"variants": [
 {"entries":[[0,"06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",null,[],[0]]],"name":"merge_states.h4.d32.f32","parameters":{"num_heads":"4","op":"merge_states"}}]}
