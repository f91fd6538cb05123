
{
 "compiler": "attn-compile fuzz",
 "format_version": 4,
 "kernels": [
  [
   0,
   "61b08010c7db75b199734e5526f6b478087a92e58b436ce6214f1e7278835b2d",
   "./m::k",
   "kernels/k.spv"
  ]
 ],
 "kinds": [
  [
   "spirv",
   "main",
   {
    "subgroup_size": 8
   },
   ""
  ]
 ],
 "manifest_hash": "restamp",
 "plans": [],
 "signature": {
  "ed25519": "4d7fa900a0368dc9e6cf582941ee1b3c0f1b1688b2f91041eab23ecf78c2411fcceb15d235139ec59ec0681fcf80c91e150ba1519d8aedb0a21321bd714c9404",
  "key": "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
 },
 "variants": [
  {
   "entries": [
    [
     0,
     "06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",
     null,
     [],
     [
      0
     ]
    ]
   ],
   "name": "merge_states.h4.d32.f32",
   "parameters": {
    "num_heads": "64",
    "op": "merge_states"
   }
  }
 ]
}