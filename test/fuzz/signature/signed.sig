signer require
{"format_version": 4,
"compiler": "attn-compile fuzz",
"manifest_hash": "11204c421b66246b45af338da4d577c03c27a4d37032309a78b4e620df432388",
"signature": {"ed25519":"26ee06988894023e997d9e1752e23264ea6da3fc7ecf14eed2fd48f49afed1b65390d75ceaf49d5c738ffae98152b57fd9c3707737e4c6a4765a6a93f9c2ff03","key":"8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"},
"kinds": [
 ["spirv","main",{"subgroup_size":8}]],
"kernels": [
 [0,"61b08010c7db75b199734e5526f6b478087a92e58b436ce6214f1e7278835b2d","kernels/k.spv","./m::k"]],
"plans": [],
"variants": [
 {"entries":[[0,"06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",null,[],[0]]],"name":"merge_states.h4.d32.f32","parameters":{"num_heads":"4","op":"merge_states"}}]}