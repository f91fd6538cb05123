
{"format_version": 4,
"compiler": "attn-compile fuzz",
"manifest_hash": "d0bda7ca75296ae6af0a252a59f84492c55e7766878f9b2b753025f57f2486ea",
"signature": {"ed25519":"21a6da5de47c594d0d621a9b324a4123351989fb1012a8abafbaf47db9862857d6f362fe559f4b006d6da4ee566bebbb1b0d9d2c359ef38788ed7a9b48fbe30c","key":"8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"},
"kernels": [
 {"entry":"main","file":"kernels/k.spv","hash":"61b08010c7db75b199734e5526f6b478087a92e58b436ce6214f1e7278835b2d","launch":{"subgroup_size":8},"target":"spirv"}],
"plans": [],
"variants": [
 {"cache_key":"06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5","kernels":[["./m::k",0]],"name":"merge_states.h4.d32.f32","parameters":{"num_heads":"4","op":"merge_states"},"subgroup_size":0}]}