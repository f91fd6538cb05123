other require
{"format_version": 4,
"compiler": "attn-compile fuzz",
"manifest_hash": "ac41d638151823a548ed353cd19b7ced2af6a33426e3ff6e94f8896a62e76854",
"signature": {"ed25519":"80dfe7118fb477c44f6cfe271a9c33fda886a743bcb03f2c020532a6b8ec75b7b1b7c814d20757212d7e7ae7f662c441d400717bfef6a5abac11686847a7c003","key":"8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"},
"kinds": [
 ["spirv","main",{"subgroup_size":8},""]],
"bounds": [],
"kernels": [
 [0,"61b08010c7db75b199734e5526f6b478087a92e58b436ce6214f1e7278835b2d",null,"./m::k","kernels/k.spv"]],
"plans": [],
"variants": [
 {"entries":[[0,"06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",null,[],[0]]],"name":"merge_states.h4.d32.f32","parameters":{"num_heads":"4","op":"merge_states"}}]}